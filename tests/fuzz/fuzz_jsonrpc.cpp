// fuzz_jsonrpc: JSON-RPC framing and the protocol engine behind it.
//
// The input is split into lines, like the stdio transport's newline-delimited framing; each
// line goes through protocol::parse_payload and every message it yields is handed to one
// real ServerSession of an McpServer with the conformance pack installed (or rejected, as
// the transports do with what could not be parsed). Everything the session sends is
// serialised with protocol::serialize, which must also write any JSON the input holds as
// nlohmann's dump() does; protocol::read_json must read every line as nlohmann's parse does.
// Between lines the event loop is polled a bounded number of times, so handlers run,
// server-to-client requests go out and the input's own replies to them (integer ids 1, 2,
// ...) can arrive. parse_payload must never throw, and every
// id it yields must come back unchanged through serialize and parse_payload.
//
// The server is built once; each input gets a fresh session that is closed at the end, and
// the loop is drained so nothing the input started survives into the next one.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <type_traits>
#include <variant>

#include <boost/asio/io_context.hpp>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "async/asio_executor.hpp"
#include "providers/source_table.hpp"
#include "protocol/json_reader.hpp"
#include "protocol/raw_json.hpp"
#include "protocol/jsonrpc.hpp"
#include "server/server.hpp"
#include "server/session.hpp"
#include "util/json.hpp"

namespace {

using toolport::Json;

constexpr std::size_t kMaxLines = 64;        // payloads per input
constexpr int kPollRounds = 64;              // io_context::poll calls per line
constexpr std::size_t kMaxOutputs = 100000;  // messages one input may make the server send

struct World {
    boost::asio::io_context io{1};
    toolport::AsioExecutor executor{io};
    std::unique_ptr<toolport::McpServer> server;
    std::vector<toolport::providers::RunningSource> sources;  // after the server: stopped before it goes

    World() {
        // Log through spdlog's formatting at every level, into a sink that drops it.
        auto logger = std::make_shared<spdlog::logger>("fuzz", std::make_shared<spdlog::sinks::null_sink_mt>());
        logger->set_level(spdlog::level::trace);
        spdlog::set_default_logger(logger);

        toolport::ServerOptions options;
        options.state_secret = "fuzz-fixed-state-secret";  // deterministic MRTR requestState
        server = std::make_unique<toolport::McpServer>(executor, options);
        sources.push_back(toolport::providers::start_source("conformance", *server));
    }

    void poll() {
        for (int i = 0; i < kPollRounds; ++i) {
            io.restart();
            if (io.poll() == 0) break;
        }
    }
};

// Every message the server sends must be valid UTF-8 JSON and a JSON-RPC 2.0 message:
// an object with "jsonrpc":"2.0" and exactly one of method / result / error, whose id is a
// string or a number (or null, for an error answering something whose id was unreadable).
// (Not protocol::classify: a check should not share the code it checks.)
bool well_formed(const std::string& wire) {
    Json v = Json::parse(wire, nullptr, /*allow_exceptions=*/false);
    if (!v.is_object() || v.value("jsonrpc", Json()) != "2.0") return false;
    int kinds = v.contains("method") + v.contains("result") + v.contains("error");
    if (kinds != 1) return false;
    if (v.contains("method") && !v["method"].is_string()) return false;
    if (auto id = v.find("id"); id != v.end()) {
        if (!id->is_string() && !id->is_number() && !(id->is_null() && v.contains("error"))) return false;
    } else if (!v.contains("method")) {
        return false;  // a response without an id
    }
    if (auto e = v.find("error"); e != v.end()) {
        if (!e->is_object() || !(*e)["code"].is_number_integer() || !(*e)["message"].is_string()) return false;
    }
    return true;
}

// Every id the parser yields is one JSON-RPC accepts, and a reply carrying it, written by
// serialize and parsed again, carries the very same id (integers beyond 64 bits included).
void check_ids_round_trip(const toolport::protocol::ParsedPayload& parsed) {
    namespace protocol = toolport::protocol;
    for (const auto& item : parsed.items) {
        const protocol::RequestId* id = nullptr;
        if (const auto* error = std::get_if<protocol::ProtocolError>(&item)) {
            id = &error->id;
        } else {
            std::visit(
                [&id](const auto& m) {
                    if constexpr (!std::is_same_v<std::decay_t<decltype(m)>, protocol::Notification>) id = &m.id;
                },
                std::get<protocol::Message>(item));
        }
        if (!id || id->is_null()) continue;
        if (!protocol::is_valid_id(*id)) {
            std::fprintf(stderr, "fuzz_jsonrpc: parse yielded an unusable id: %.300s\n", id->dump().c_str());
            std::abort();
        }
        const std::string wire = protocol::serialize(protocol::make_response(*id, nullptr));
        auto again = protocol::parse_payload(wire);
        const auto* message = again.items.size() == 1 ? std::get_if<protocol::Message>(&again.items[0]) : nullptr;
        const auto* response = message ? std::get_if<protocol::Response>(message) : nullptr;
        if (!response || response->id != *id || protocol::id_text(response->id) != protocol::id_text(*id)) {
            std::fprintf(stderr, "fuzz_jsonrpc: id %.300s did not survive serialize and parse: %.300s\n",
                         protocol::id_text(*id).c_str(), wire.c_str());
            std::abort();
        }
    }
}

// protocol::serialize (json_writer.cpp, Toolport's own writer) writes what nlohmann's dump()
// writes, byte for byte, for any JSON the input holds.
void check_writer_matches_nlohmann(std::string_view line) {
    namespace protocol = toolport::protocol;
    if (protocol::max_nesting_depth(line) > 64) return;  // both writers recurse
    Json any = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (any.is_discarded()) return;
    const std::string ours = protocol::serialize(any);
    const std::string theirs = any.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (ours != theirs) {
        std::fprintf(stderr, "fuzz_jsonrpc: serialize wrote %.300s where dump wrote %.300s\n", ours.c_str(),
                     theirs.c_str());
        std::abort();
    }
}

// Same values of the same types all the way down (operator== calls 1u and 1 equal).
bool identical(const Json& a, const Json& b) {
    if (a.type() != b.type()) return false;
    if (a.is_structured()) {
        if (a.size() != b.size()) return false;
        if (a.is_object()) {
            for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j)
                if (i.key() != j.key() || !identical(*i, *j)) return false;
            return true;
        }
        for (std::size_t i = 0; i < a.size(); ++i)
            if (!identical(a[i], b[i])) return false;
        return true;
    }
    return a.dump() == b.dump();  // bit for bit for floats too (-0.0 vs 0.0)
}

// protocol::read_json (json_reader.cpp, Toolport's own reader) builds what Json::parse
// builds, and refuses what it refuses, for any input.
void check_reader_matches_nlohmann(std::string_view line) {
    namespace protocol = toolport::protocol;
    if (protocol::max_nesting_depth(line) > 64) return;  // nlohmann recurses without a limit
    // nlohmann stops reading at a NUL byte and ignores what follows; read_json refuses
    // anything but whitespace after the value (json_reader.hpp), by design.
    if (line.find('\0') != std::string_view::npos) return;
    Json theirs;
    bool theirs_ok = true;
    try {
        theirs = Json::parse(line);
    } catch (const Json::exception&) {
        theirs_ok = false;
    }
    Json ours;
    bool ours_ok = true;
    try {
        ours = protocol::read_json(line);
    } catch (const Json::parse_error&) {
        ours_ok = false;
    }
    if (ours_ok != theirs_ok || (ours_ok && !identical(ours, theirs))) {
        std::fprintf(stderr, "fuzz_jsonrpc: read_json %s where Json::parse %s: %.300s\n",
                     ours_ok ? ours.dump().c_str() : "refused", theirs_ok ? theirs.dump().c_str() : "refused",
                     std::string(line).c_str());
        std::abort();
    }
    // With a reply's result content kept raw (raw_json.hpp, as a client reads replies): the
    // same acceptance, and once expanded the same document.
    protocol::JsonReadOptions raw_parts;
    raw_parts.raw_result_parts = true;
    Json raw;
    bool raw_ok = true;
    try {
        raw = protocol::read_json(line, raw_parts);
    } catch (const Json::parse_error&) {
        raw_ok = false;
    }
    if (raw_ok) {
        auto expand = [](Json& message) {
            if (message.is_object() && message.contains("result")) protocol::expand_raw_result_parts(message["result"]);
        };
        if (raw.is_array()) {
            for (auto& message : raw) expand(message);
        } else {
            expand(raw);
        }
    }
    if (raw_ok != ours_ok || (raw_ok && !identical(raw, ours))) {
        std::fprintf(stderr, "fuzz_jsonrpc: read_json with raw result parts %s where without them %s: %.300s\n",
                     raw_ok ? raw.dump().c_str() : "refused", ours_ok ? ours.dump().c_str() : "refused",
                     std::string(line).c_str());
        std::abort();
    }
}

World& world() {
    static World* w = new World();  // never destroyed: lives for the whole fuzzing run
    return *w;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    world();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    namespace protocol = toolport::protocol;
    World& w = world();

    std::size_t outputs = 0;
    std::size_t output_bytes = 0;
    auto session = w.server->open_session([&](const Json& message, const protocol::RequestId* related) {
        std::string wire = protocol::serialize(message);
        if (!well_formed(wire)) {
            std::fprintf(stderr, "fuzz_jsonrpc: the server sent a malformed message: %.300s\n", wire.c_str());
            std::abort();
        }
        if (related && related->is_null()) std::abort();
        output_bytes += wire.size();
        if (++outputs > kMaxOutputs) std::abort();  // a reply storm from bounded input
    });

    std::string_view input(reinterpret_cast<const char*>(data), size);
    std::size_t lines = 0;
    while (!input.empty() && lines++ < kMaxLines) {
        auto nl = input.find('\n');
        auto line = input.substr(0, nl);
        input = nl == std::string_view::npos ? std::string_view() : input.substr(nl + 1);

        protocol::ParsedPayload parsed;
        try {
            parsed = protocol::parse_payload(line);
        } catch (...) {
            std::fprintf(stderr, "fuzz_jsonrpc: parse_payload threw\n");  // contract: it never does
            std::abort();
        }
        check_ids_round_trip(parsed);
        check_writer_matches_nlohmann(line);
        check_reader_matches_nlohmann(line);
        if (parsed.fatal) {
            if (!parsed.items.empty()) std::abort();  // contract: fatal means no items
            session->reject(*parsed.fatal);
        } else {
            for (auto& item : parsed.items) {
                if (auto* error = std::get_if<protocol::ProtocolError>(&item)) session->reject(*error);
                else session->receive(std::move(std::get<protocol::Message>(item)));
            }
        }
        w.poll();
    }

    session->close();
    w.poll();  // cancelled handlers and timers finish here
    session.reset();
    w.poll();
    if (w.server->session_count() != 0) std::abort();  // a closed session must leave the server
    (void)output_bytes;
    return 0;
}
