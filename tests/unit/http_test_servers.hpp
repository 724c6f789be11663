// Real servers on loopback for the downstream HTTP client's tests: an HTTP/1.1 server
// (plain or TLS, with certificates the test generates at run time) whose answers a test
// scripts per request, and a small CONNECT proxy. Each runs on its own thread and counts
// what it saw, so tests can check pooling, retries and refusals from the server's side.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace toolport::test_support {

// A certificate and its key, PEM-encoded.
struct Pem {
    std::string cert;
    std::string key;
};

// A throwaway certificate authority and the leaf certificates tests need.
class TestCa {
public:
    explicit TestCa(const std::string& name = "Toolport Test CA");
    ~TestCa();
    const std::string& cert_pem() const { return ca_.cert; }
    // A leaf for `dns_names` (and 127.0.0.1), valid from an hour ago for `valid_days`
    // (negative: expired that many days ago).
    Pem leaf(const std::vector<std::string>& dns_names, int valid_days = 30) const;
    // Writes the CA certificate to a file (for ca_file / SSL_CERT_FILE); returns its path.
    std::string write_cert_file(const std::string& name) const;

private:
    struct Keys;
    std::unique_ptr<Keys> keys_;
    Pem ca_;
};

struct SeenRequest {
    std::string method;
    std::string target;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    std::chrono::steady_clock::time_point at;           // when it arrived
    std::string header(const std::string& name) const;  // case-insensitive, "" when absent
};

// What the server does with one request.
struct ScriptedReply {
    unsigned status = 200;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;             // sent as is (set Content-Encoding yourself for compressed bodies)
    bool close = false;           // Connection: close, then close
    long reset_after_bytes = -1;  // >= 0: send the head and this much of the body, then reset
    int delay_ms = 0;             // wait before answering
    bool chunked = false;         // chunked transfer encoding instead of Content-Length
};

class ScriptedServer {
public:
    using Script = std::function<ScriptedReply(const SeenRequest&)>;
    // TLS when `tls` is given.
    explicit ScriptedServer(Script script, const Pem* tls = nullptr);
    ~ScriptedServer();

    unsigned short port() const { return port_; }
    std::string url(const std::string& path = "/") const;  // http(s)://127.0.0.1:PORT/path
    int connections() const { return connections_.load(); }
    std::vector<SeenRequest> requests() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    unsigned short port_ = 0;
    std::atomic<int> connections_{0};
    friend struct Impl;
};

// A CONNECT-only forward proxy: tunnels bytes to the host:port the client names.
class ConnectProxy {
public:
    ConnectProxy();
    ~ConnectProxy();
    unsigned short port() const { return port_; }
    std::vector<std::string> connect_targets() const;  // "host:port" of every CONNECT

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    unsigned short port_ = 0;
};

// A TLS terminator in front of a plain server on 127.0.0.1:`target_port` (as a load
// balancer would stand in front of an MCP server): bytes are relayed both ways.
class TlsRelay {
public:
    TlsRelay(unsigned short target_port, const Pem& tls);
    ~TlsRelay();
    unsigned short port() const { return port_; }
    int connections() const { return connections_.load(); }

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    unsigned short port_ = 0;
    std::atomic<int> connections_{0};
};

// gzip- or zlib-wrapped deflate of `data` (zlib's own compressor).
std::string gzip(const std::string& data);
std::string zlib_deflate(const std::string& data);

}  // namespace toolport::test_support
