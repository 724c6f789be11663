#include "http_test_servers.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <zlib.h>

#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <thread>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <gtest/gtest.h>

namespace toolport::test_support {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
constexpr auto nothrow = net::as_tuple(net::use_awaitable);

// ------------------------------------------------------------------ certificates

namespace {

std::string pem_of(X509* cert) {
    BIO* bio = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(bio, cert);
    char* data = nullptr;
    long n = BIO_get_mem_data(bio, &data);
    std::string out(data, static_cast<std::size_t>(n));
    BIO_free(bio);
    return out;
}

std::string pem_of(EVP_PKEY* key) {
    BIO* bio = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
    char* data = nullptr;
    long n = BIO_get_mem_data(bio, &data);
    std::string out(data, static_cast<std::size_t>(n));
    BIO_free(bio);
    return out;
}

void add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    if (!ext) throw std::runtime_error("cannot build a certificate extension");
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
}

X509* make_cert(EVP_PKEY* key, const std::string& common_name, X509* issuer, EVP_PKEY* issuer_key, long from_s,
                long until_s, bool ca, const std::vector<std::string>& dns_names) {
    static long serial = 1;
    X509* cert = X509_new();
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), ++serial);
    X509_gmtime_adj(X509_getm_notBefore(cert), from_s);
    X509_gmtime_adj(X509_getm_notAfter(cert), until_s);
    X509_set_pubkey(cert, key);
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name.c_str()),
                               -1, -1, 0);
    X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : name);
    if (ca) {
        add_ext(cert, issuer ? issuer : cert, NID_basic_constraints, "critical,CA:TRUE");
        add_ext(cert, issuer ? issuer : cert, NID_key_usage, "critical,keyCertSign,cRLSign");
    } else {
        std::string san;
        for (const auto& d : dns_names) san += (san.empty() ? "" : ",") + std::string("DNS:") + d;
        san += std::string(san.empty() ? "" : ",") + "IP:127.0.0.1";
        add_ext(cert, issuer, NID_subject_alt_name, san);
        add_ext(cert, issuer, NID_basic_constraints, "CA:FALSE");
    }
    X509_sign(cert, issuer_key ? issuer_key : key, EVP_sha256());
    return cert;
}

}  // namespace

struct TestCa::Keys {
    EVP_PKEY* key = nullptr;
    X509* cert = nullptr;
    ~Keys() {
        X509_free(cert);
        EVP_PKEY_free(key);
    }
};

TestCa::TestCa(const std::string& name) : keys_(std::make_unique<Keys>()) {
    keys_->key = EVP_EC_gen("P-256");
    keys_->cert = make_cert(keys_->key, name, nullptr, nullptr, -3600, 86400L * 365, true, {});
    ca_ = {pem_of(keys_->cert), pem_of(keys_->key)};
}

TestCa::~TestCa() = default;

Pem TestCa::leaf(const std::vector<std::string>& dns_names, int valid_days) const {
    EVP_PKEY* key = EVP_EC_gen("P-256");
    const long from = valid_days < 0 ? 86400L * (valid_days - 30) : -3600;
    const long until = 86400L * valid_days;
    X509* cert = make_cert(key, dns_names.empty() ? "leaf" : dns_names.front(), keys_->cert, keys_->key, from, until,
                           false, dns_names);
    Pem pem{pem_of(cert), pem_of(key)};
    X509_free(cert);
    EVP_PKEY_free(key);
    return pem;
}

std::string TestCa::write_cert_file(const std::string& name) const {
    // One file per process: ctest runs tests in parallel processes, and two of them writing
    // different CAs to one path made one fail to load it.
    const std::string path = ::testing::TempDir() + std::to_string(::getpid()) + "-" + name;
    std::ofstream(path) << ca_.cert;
    return path;
}

// ------------------------------------------------------------------ scripted server

std::string SeenRequest::header(const std::string& name) const {
    for (const auto& [n, v] : headers) {
        if (beast::iequals(n, name)) return v;
    }
    return {};
}

struct ScriptedServer::Impl {
    ScriptedServer& owner;
    Script script;
    net::io_context io;
    tcp::acceptor acceptor{io};
    std::optional<ssl::context> tls;
    std::thread thread;
    mutable std::mutex mutex;
    std::vector<SeenRequest> seen;

    explicit Impl(ScriptedServer& owner, Script script) : owner(owner), script(std::move(script)) {}

    template <typename Stream>
    net::awaitable<void> serve(Stream& stream) {
        beast::flat_buffer buffer;
        for (;;) {
            http::request<http::string_body> req;
            auto [ec, n] = co_await http::async_read(stream, buffer, req, nothrow);
            if (ec) co_return;
            SeenRequest r{std::string(req.method_string()),
                          std::string(req.target()),
                          {},
                          req.body(),
                          std::chrono::steady_clock::now()};
            for (const auto& f : req) r.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
            {
                std::lock_guard lock(mutex);
                seen.push_back(r);
            }
            ScriptedReply reply = script(r);
            if (reply.delay_ms > 0) {
                net::steady_timer timer(io, std::chrono::milliseconds(reply.delay_ms));
                co_await timer.async_wait(nothrow);
            }
            std::string head = "HTTP/1.1 " + std::to_string(reply.status) + " Scripted\r\n";
            for (const auto& [name, value] : reply.headers) head += name + ": " + value + "\r\n";
            if (reply.close) head += "Connection: close\r\n";
            std::string body = reply.body;
            if (reply.chunked) {
                head += "Transfer-Encoding: chunked\r\n";
                std::string framed;
                for (std::size_t at = 0; at < body.size(); at += 1000) {
                    auto piece = body.substr(at, 1000);
                    char size[32];
                    std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
                    framed += size + piece + "\r\n";
                }
                body = framed + "0\r\n\r\n";
            } else if (req.method() != http::verb::head) {
                head += "Content-Length: " + std::to_string(reply.body.size()) + "\r\n";
            }
            head += "\r\n";
            if (reply.reset_after_bytes >= 0) {
                std::string partial = head + body.substr(0, static_cast<std::size_t>(reply.reset_after_bytes));
                co_await net::async_write(stream, net::buffer(partial), nothrow);
                auto& socket = beast::get_lowest_layer(stream);
                beast::error_code ignored;
                socket.set_option(net::socket_base::linger(true, 0), ignored);
                socket.close(ignored);
                co_return;
            }
            std::string all = head + (req.method() == http::verb::head ? std::string() : body);
            auto [wec, wn] = co_await net::async_write(stream, net::buffer(all), nothrow);
            if (wec || reply.close) co_return;
        }
    }

    net::awaitable<void> connection(tcp::socket socket) {
        ++owner.connections_;
        if (tls) {
            ssl::stream<tcp::socket> stream(std::move(socket), *tls);
            auto [ec] = co_await stream.async_handshake(ssl::stream_base::server, nothrow);
            if (ec) co_return;
            co_await serve(stream);
        } else {
            co_await serve(socket);
        }
    }

    net::awaitable<void> accept_loop() {
        for (;;) {
            auto [ec, socket] = co_await acceptor.async_accept(nothrow);
            if (ec) co_return;
            net::co_spawn(io, connection(std::move(socket)), net::detached);
        }
    }
};

ScriptedServer::ScriptedServer(Script script, const Pem* tls)
    : impl_(std::make_unique<Impl>(*this, std::move(script))) {
    if (tls) {
        impl_->tls.emplace(ssl::context::tls_server);
        impl_->tls->use_certificate_chain(net::buffer(tls->cert));
        impl_->tls->use_private_key(net::buffer(tls->key), ssl::context::pem);
    }
    tcp::endpoint endpoint(net::ip::make_address("127.0.0.1"), 0);
    impl_->acceptor.open(endpoint.protocol());
    impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
    impl_->acceptor.bind(endpoint);
    impl_->acceptor.listen();
    port_ = impl_->acceptor.local_endpoint().port();
    net::co_spawn(impl_->io, impl_->accept_loop(), net::detached);
    impl_->thread = std::thread([this] { impl_->io.run(); });
}

ScriptedServer::~ScriptedServer() {
    impl_->io.stop();
    impl_->thread.join();
}

std::string ScriptedServer::url(const std::string& path) const {
    return std::string(impl_->tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) + path;
}

std::vector<SeenRequest> ScriptedServer::requests() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->seen;
}

// ------------------------------------------------------------------ CONNECT proxy

// Listens on a kernel-chosen loopback port and runs `impl`'s accept loop on its own
// thread; returns the port.
template <typename Impl>
unsigned short serve_on_loopback(Impl& impl) {
    tcp::endpoint endpoint(net::ip::make_address("127.0.0.1"), 0);
    impl.acceptor.open(endpoint.protocol());
    impl.acceptor.bind(endpoint);
    impl.acceptor.listen();
    net::co_spawn(impl.io, impl.accept_loop(), net::detached);
    impl.thread = std::thread([&impl] { impl.io.run(); });
    return impl.acceptor.local_endpoint().port();
}

struct ConnectProxy::Impl {
    net::io_context io;
    tcp::acceptor acceptor{io};
    std::thread thread;
    mutable std::mutex mutex;
    std::vector<std::string> targets;

    static net::awaitable<void> pipe(std::shared_ptr<tcp::socket> from, std::shared_ptr<tcp::socket> to) {
        std::array<char, 16384> data;
        for (;;) {
            auto [ec, n] = co_await from->async_read_some(net::buffer(data), nothrow);
            if (ec) break;
            auto [wec, wn] = co_await net::async_write(*to, net::buffer(data.data(), n), nothrow);
            if (wec) break;
        }
        beast::error_code ignored;
        to->shutdown(tcp::socket::shutdown_send, ignored);
    }

    net::awaitable<void> connection(tcp::socket socket) {
        auto client = std::make_shared<tcp::socket>(std::move(socket));
        net::streambuf head;
        auto [ec, n] = co_await net::async_read_until(*client, head, "\r\n\r\n", nothrow);
        if (ec) co_return;
        std::string text(net::buffers_begin(head.data()), net::buffers_begin(head.data()) + static_cast<long>(n));
        if (text.rfind("CONNECT ", 0) != 0) co_return;
        std::string target = text.substr(8, text.find(' ', 8) - 8);
        {
            std::lock_guard lock(mutex);
            targets.push_back(target);
        }
        auto colon = target.rfind(':');
        auto upstream = std::make_shared<tcp::socket>(io);
        tcp::resolver resolver(io);
        auto [rec, endpoints] = co_await resolver.async_resolve(target.substr(0, colon), target.substr(colon + 1),
                                                                nothrow);
        if (!rec) std::tie(rec, std::ignore) = co_await net::async_connect(*upstream, endpoints, nothrow);
        std::string answer = rec ? "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n"
                                 : "HTTP/1.1 200 Connection Established\r\n\r\n";
        co_await net::async_write(*client, net::buffer(answer), nothrow);
        if (rec) co_return;
        net::co_spawn(io, pipe(client, upstream), net::detached);
        co_await pipe(upstream, client);
    }

    net::awaitable<void> accept_loop() {
        for (;;) {
            auto [ec, socket] = co_await acceptor.async_accept(nothrow);
            if (ec) co_return;
            net::co_spawn(io, connection(std::move(socket)), net::detached);
        }
    }
};

ConnectProxy::ConnectProxy() : impl_(std::make_unique<Impl>()) { port_ = serve_on_loopback(*impl_); }

ConnectProxy::~ConnectProxy() {
    impl_->io.stop();
    impl_->thread.join();
}

std::vector<std::string> ConnectProxy::connect_targets() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->targets;
}

// ------------------------------------------------------------------ TLS relay

struct TlsRelay::Impl {
    net::io_context io;
    tcp::acceptor acceptor{io};
    ssl::context tls{ssl::context::tls_server};
    unsigned short target_port = 0;
    std::atomic<int>* connections = nullptr;
    std::thread thread;

    template <typename From, typename To>
    static net::awaitable<void> pipe(std::shared_ptr<From> from, std::shared_ptr<To> to, std::function<void()> done) {
        std::array<char, 16384> data;
        for (;;) {
            auto [ec, n] = co_await from->async_read_some(net::buffer(data), nothrow);
            if (n > 0) {
                auto [wec, wn] = co_await net::async_write(*to, net::buffer(data.data(), n), nothrow);
                if (wec) break;
            }
            if (ec) break;
        }
        done();
    }

    net::awaitable<void> connection(tcp::socket socket) {
        auto client = std::make_shared<ssl::stream<tcp::socket>>(std::move(socket), tls);
        auto [hec] = co_await client->async_handshake(ssl::stream_base::server, nothrow);
        if (hec) co_return;
        connections->fetch_add(1);
        auto upstream = std::make_shared<tcp::socket>(io);
        auto [cec] = co_await upstream->async_connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), target_port),
                                                      nothrow);
        if (cec) co_return;
        // Either side ending ends both (the server's close reaches the client as a close).
        auto end_both = [client, upstream]() {
            beast::error_code ignored;
            upstream->close(ignored);
            client->next_layer().close(ignored);
        };
        net::co_spawn(io, pipe(client, upstream, end_both), net::detached);
        co_await pipe(upstream, client, end_both);
    }

    net::awaitable<void> accept_loop() {
        for (;;) {
            auto [ec, socket] = co_await acceptor.async_accept(nothrow);
            if (ec) co_return;
            net::co_spawn(io, connection(std::move(socket)), net::detached);
        }
    }
};

TlsRelay::TlsRelay(unsigned short target_port, const Pem& tls) : impl_(std::make_unique<Impl>()) {
    impl_->target_port = target_port;
    impl_->connections = &connections_;
    impl_->tls.use_certificate_chain(net::buffer(tls.cert));
    impl_->tls.use_private_key(net::buffer(tls.key), ssl::context::pem);
    port_ = serve_on_loopback(*impl_);
}

TlsRelay::~TlsRelay() {
    impl_->io.stop();
    impl_->thread.join();
}

// ------------------------------------------------------------------ compression

namespace {
std::string deflate_with(const std::string& data, int window_bits) {
    z_stream z{};
    deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, window_bits, 9, Z_DEFAULT_STRATEGY);
    std::string out(deflateBound(&z, data.size()) + 64, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}
}  // namespace

std::string gzip(const std::string& data) { return deflate_with(data, 15 + 16); }
std::string zlib_deflate(const std::string& data) { return deflate_with(data, 15); }

}  // namespace toolport::test_support
