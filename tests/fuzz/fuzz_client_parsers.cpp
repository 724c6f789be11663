// fuzz_client_parsers: the small parsers that read what other programs and users hand the
// client and the stores, each checked against a property, not only for crashes:
//
//   0  SseParser (text/event-stream from a server): feeding the input in one piece and one
//      byte at a time gives the same events, last event id and retry advice (or fails alike
//      on the size limit), since the network may cut a stream anywhere.
//   1  as 4: the --url of list/call/test goes through the downstream client's URL parser
//      (kept as its own selector so the committed corpus keeps its meaning).
//   2  split_shell_words (a --stdio command line): the words, quoted back with single
//      quotes and split again, come out the same.
//   3  parse_redis_url (the store setting): neither its errors nor describe() repeat the
//      password.
//   4  the downstream client's URL parser: an accepted URL reparses from origin() + target
//      to the same parts, and display() never shows the query; resolve_location never
//      throws.
//   5  the downstream client's BodyDecoder (gzip/deflate from a server): never produces
//      more than its limit, whether fed whole or byte by byte; and the same bytes decode
//      the same in both cases.
//   6  NO_PROXY matching and Retry-After parsing: no crash, no negative wait.
//
// The first byte picks the parser; the rest is its input. A violated property aborts.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "http_client/body_decoder.hpp"
#include "http_client/proxy.hpp"
#include "http_client/retry_policy.hpp"
#include "http_client/url.hpp"
#include "client/shell_words.hpp"
#include "client/sse_parser.hpp"
#include "stores/redis_url.hpp"
#include "stores/stores.hpp"

namespace {

[[noreturn]] void violated(const char* what) {
    std::fprintf(stderr, "property violated: %s\n", what);
    std::abort();
}

constexpr std::size_t kSseLimit = 4096;  // small, so the size limit is reached too

struct SseOutcome {
    std::vector<toolport::client::SseEvent> events;
    std::string last_id;
    long long retry_ms = -1;
    bool over_limit = false;
};

template <class Feed>
SseOutcome run_sse(Feed feed) {
    toolport::client::SseParser parser(kSseLimit);
    SseOutcome out;
    try {
        feed(parser, out.events);
    } catch (const toolport::client::SseError&) {
        out.over_limit = true;
        return out;
    }
    out.last_id = parser.last_event_id();
    if (auto r = parser.retry()) out.retry_ms = r->count();
    return out;
}

void check_sse(std::string_view input) {
    auto whole = run_sse([&](auto& parser, auto& events) { events = parser.feed(input); });
    auto bytewise = run_sse([&](auto& parser, auto& events) {
        for (std::size_t i = 0; i < input.size(); ++i) {
            for (auto& e : parser.feed(input.substr(i, 1))) events.push_back(std::move(e));
        }
    });
    if (whole.over_limit != bytewise.over_limit) violated("SSE: the size limit depends on chunking");
    if (whole.over_limit) return;
    if (whole.events.size() != bytewise.events.size()) violated("SSE: event count depends on chunking");
    for (std::size_t i = 0; i < whole.events.size(); ++i) {
        const auto& a = whole.events[i];
        const auto& b = bytewise.events[i];
        if (a.type != b.type || a.data != b.data || a.id != b.id) violated("SSE: an event depends on chunking");
    }
    if (whole.last_id != bytewise.last_id) violated("SSE: last event id depends on chunking");
    if (whole.retry_ms != bytewise.retry_ms) violated("SSE: retry depends on chunking");
}

std::string single_quoted(const std::string& word) {
    std::string out = "'";
    for (char c : word) {
        if (c == '\'') out += "'\\''";
        else out += c;
    }
    return out + "'";
}

void check_shell_words(std::string_view input) {
    std::vector<std::string> words;
    try {
        words = toolport::client::split_shell_words(input);
    } catch (const std::invalid_argument&) {
        return;
    }
    std::string line;
    for (const auto& w : words) line += single_quoted(w) + ' ';
    std::vector<std::string> again;
    try {
        again = toolport::client::split_shell_words(line);
    } catch (const std::invalid_argument&) {
        violated("shell words: quoted words are refused");
    }
    if (again != words) violated("shell words: quoted words split differently");
}

void check_redis_url(std::string_view input) {
    // The password: between the first ':' after "//" and the last '@' before the path.
    std::string password;
    if (auto scheme = input.find("//"); scheme != std::string_view::npos) {
        auto rest = input.substr(scheme + 2);
        auto authority = rest.substr(0, rest.find('/'));
        if (auto at = authority.rfind('@'); at != std::string_view::npos) {
            auto credentials = authority.substr(0, at);
            if (auto colon = credentials.find(':'); colon != std::string_view::npos) {
                password = std::string(credentials.substr(colon + 1));
            }
        }
    }
    // Only a password that appears nowhere else in the URL, and holds a character the
    // messages' own words never use, can be told apart in a message (the fuzzer readily
    // makes "passwords" out of the messages' text).
    const bool telling = password.size() >= 4 && input.find(password) == input.rfind(password) &&
                         password.find_first_of("!*~^") != std::string::npos;
    std::string said;
    try {
        said = toolport::stores::parse_redis_url(input).describe();
    } catch (const toolport::stores::StoreConfigError& e) {
        said = e.what();
    }
    if (telling && said.find(password) != std::string::npos) violated("redis url: the password is repeated");
}

void check_downstream_url(std::string_view input) {
    namespace hc = toolport::http_client;
    hc::Url url;
    try {
        url = hc::parse_url(input);
    } catch (const std::invalid_argument&) {
        return;
    }
    auto again = hc::parse_url(url.origin() + url.target);
    if (again.host != url.host || again.port != url.port || again.target != url.target || again.https != url.https) {
        violated("downstream url: origin() + target does not parse back to the same parts");
    }
    if (auto q = url.target.find('?'); q != std::string::npos && url.display().find('?') != std::string::npos) {
        violated("downstream url: display() shows the query");
    }
    (void)hc::resolve_location(url, input.substr(input.size() / 2));
}

void check_body_decoder(std::string_view input) {
    namespace hc = toolport::http_client;
    if (input.empty()) return;
    const char* encoding = (input[0] & 1) ? "gzip" : "deflate";
    const std::size_t limit = 1 + static_cast<unsigned char>(input[0]) * 64;
    input.remove_prefix(1);
    auto decode = [&](bool bytewise, std::string& out) -> int {  // 1 ok, 0 over the limit, -1 corrupt
        try {
            hc::BodyDecoder decoder(encoding, limit);
            if (bytewise) {
                for (char c : input) {
                    if (!decoder.feed(std::string_view(&c, 1), out)) return 0;
                }
            } else if (!decoder.feed(input, out)) {
                return 0;
            }
            return 1;
        } catch (const hc::DecodeError&) {
            return -1;
        }
    };
    std::string whole, bytes;
    const int a = decode(false, whole);
    const int b = decode(true, bytes);
    if (whole.size() > limit || bytes.size() > limit) violated("body decoder: produced more than its limit");
    if (a == 1 && b == 1 && whole != bytes) violated("body decoder: whole and byte-by-byte decoding differ");
}

void check_proxy_and_retry_after(std::string_view input) {
    namespace hc = toolport::http_client;
    hc::ProxySettings settings;
    auto comma = input.find('\n');
    std::string list(input.substr(0, comma));
    for (std::size_t at = 0; at <= list.size();) {
        auto next = list.find(',', at);
        settings.no_proxy.push_back(list.substr(at, next == std::string::npos ? std::string::npos : next - at));
        if (next == std::string::npos) break;
        at = next + 1;
    }
    std::string_view host = comma == std::string_view::npos ? std::string_view() : input.substr(comma + 1);
    (void)settings.bypasses(host, 443);
    try {
        (void)hc::ProxySettings::parse(input);
    } catch (const std::invalid_argument&) {}
    if (auto wait = hc::parse_retry_after(input, std::chrono::system_clock::now()); wait && wait->count() < 0) {
        violated("retry-after: negative wait");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 7) {
        case 0: check_sse(input); break;
        case 1: check_downstream_url(input); break;
        case 2: check_shell_words(input); break;
        case 3: check_redis_url(input); break;
        case 4: check_downstream_url(input); break;
        case 5: check_body_decoder(input); break;
        case 6: check_proxy_and_retry_after(input); break;
    }
    return 0;
}
