// The downstream HTTP client on reused connections, plain HTTP against HTTPS, side by side
// in one run: each iteration is one GET of a 1 KiB JSON body from a loopback server (the
// tests' scripted server, plain or TLS with a certificate made at start), on the pooled
// connection. The HTTPS/HTTP throughput ratio is what bench/run_tango_bench.sh reports
// (target >= 0.8).
#include <cstdlib>

#include <benchmark/benchmark.h>

#include <boost/asio/io_context.hpp>

#include "async/asio_executor.hpp"
#include "async/task.hpp"
#include "http_client/http_client.hpp"
#include "http_test_servers.hpp"

using namespace toolport;

namespace {

struct Setup {
    test_support::TestCa ca;
    test_support::Pem leaf = ca.leaf({"localhost"});
    std::string body = std::string(R"({"count": 1, "next": null, "results": [{"key": ")") + std::string(950, 'x') +
                       "\"}]}";
    test_support::ScriptedServer plain{[this](const test_support::SeenRequest&) { return reply(); }};
    test_support::ScriptedServer secure{[this](const test_support::SeenRequest&) { return reply(); }, &leaf};
    std::string ca_file = ca.write_cert_file("downstream_bench_ca.pem");

    test_support::ScriptedReply reply() const {
        test_support::ScriptedReply r;
        r.body = body;
        r.headers = {{"Content-Type", "application/json"}};
        return r;
    }
};

Setup& setup() {
    static Setup s;
    return s;
}

void fetch_loop(benchmark::State& state, bool https, std::string url = {}) {
    auto& s = setup();
    boost::asio::io_context io;
    AsioExecutor executor(io);
    http_client::ClientOptions options;
    options.proxy = {};
    options.ca_file = s.ca_file;
    http_client::HttpClient client(executor, options);
    if (url.empty()) {
        url = https ? "https://localhost:" + std::to_string(s.secure.port()) + "/api/contracts/?limit=1"
                    : s.plain.url("/api/contracts/?limit=1");
    }
    auto once = [&]() {
        bool done = false;
        std::size_t size = 0;
        spawn(client.fetch({.url = url, .headers = {{"X-API-KEY", "bench-key"}}}),
              [&](std::optional<http_client::Response> r, std::exception_ptr e) {
                  if (e || !r || r->status != 200) std::abort();
                  size = r->body.size();
                  done = true;
              });
        io.restart();
        while (!done) io.run_one();
        return size;
    };
    once();  // connect (and handshake) outside the measurement: reused connections only
    for (auto _ : state) benchmark::DoNotOptimize(once());
    state.counters["connections_opened"] = static_cast<double>(client.stats().connections_opened);
}

void BM_Fetch_Http(benchmark::State& state) { fetch_loop(state, false); }
void BM_Fetch_Https(benchmark::State& state) { fetch_loop(state, true); }
BENCHMARK(BM_Fetch_Http)->UseRealTime();
BENCHMARK(BM_Fetch_Https)->UseRealTime();

// BENCH_FETCH_URL=http://…: the same loop against another server (the Tango fixture), to
// set the client's own round trip beside wrk's.
void BM_Fetch_External(benchmark::State& state) {
    const char* url = std::getenv("BENCH_FETCH_URL");
    if (!url) {
        state.SkipWithError("BENCH_FETCH_URL is not set");
        return;
    }
    fetch_loop(state, false, url);
}
BENCHMARK(BM_Fetch_External)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
