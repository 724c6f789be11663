#include "client/oauth/www_authenticate.hpp"

#include <vector>

#include "http_client/url.hpp"
#include "util/ascii.hpp"
#include "util/http_text.hpp"

namespace toolport::client::oauth {

namespace {

struct Cursor {
    std::string_view text;
    std::size_t pos = 0;

    bool done() const { return pos >= text.size(); }
    void skip_space() {
        while (!done() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
    }
    bool eat(char c) {
        skip_space();
        if (!done() && text[pos] == c) {
            ++pos;
            return true;
        }
        return false;
    }
    std::string token() {
        skip_space();
        std::size_t start = pos;
        while (!done() && util::is_http_token(text.substr(pos, 1))) ++pos;
        return std::string(text.substr(start, pos - start));
    }
    // A quoted-string (RFC 9110 §5.6.4); nullopt when it does not end.
    std::optional<std::string> quoted() {
        std::string out;
        ++pos;  // the opening quote
        while (!done()) {
            char c = text[pos++];
            if (c == '"') return out;
            if (c == '\\') {
                if (done()) return std::nullopt;
                c = text[pos++];
            }
            out.push_back(c);
        }
        return std::nullopt;
    }
};

}  // namespace

std::optional<std::string> Challenge::param(std::string_view name) const {
    auto it = params.find(std::string(name));
    if (it == params.end()) return std::nullopt;
    return it->second;
}

namespace {

// Every challenge of `header`; nullopt when it cannot be parsed.
std::optional<std::vector<Challenge>> parse_challenges(std::string_view header) {
    // challenge = auth-scheme [ 1*SP ( token68 / #auth-param ) ], challenges separated by
    // commas: a token followed by '=' is a parameter of the current challenge, a token
    // followed by anything else starts the next challenge.
    std::vector<Challenge> challenges;
    Cursor c{header};
    while (true) {
        while (c.eat(',')) {}
        c.skip_space();
        if (c.done()) break;
        std::string name = c.token();
        if (name.empty()) return std::nullopt;
        c.skip_space();
        if (!c.done() && c.text[c.pos] == '=' && !challenges.empty()) {
            ++c.pos;
            c.skip_space();
            std::string value;
            if (!c.done() && c.text[c.pos] == '"') {
                auto q = c.quoted();
                if (!q) return std::nullopt;
                value = std::move(*q);
            } else {
                value = c.token();
            }
            challenges.back().params[util::to_lower_ascii(name)] = std::move(value);
            continue;
        }
        // A new challenge. A token68 after a scheme (Basic's credentials form) reads as a
        // parameter of that challenge; only Bearer's and DPoP's parameters are used.
        challenges.push_back(Challenge{name, {}});
    }
    return challenges;
}

}  // namespace

std::optional<Challenge> parse_challenge(std::string_view header, std::string_view scheme) {
    auto challenges = parse_challenges(header);
    if (!challenges) return std::nullopt;
    for (auto& ch : *challenges) {
        if (util::iequals_ascii(ch.scheme, scheme)) return std::move(ch);
    }
    return std::nullopt;
}

std::optional<Challenge> parse_bearer_challenge(std::string_view header) {
    if (auto bearer = parse_challenge(header, "Bearer")) return bearer;
    return parse_challenge(header, "DPoP");
}

}  // namespace toolport::client::oauth
