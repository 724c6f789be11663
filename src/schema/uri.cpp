// URI reference resolution for $id and $ref.
//
// JSON Schema identifies schemas by URI and resolves every "$id" and "$ref" against the base
// URI in scope (RFC 3986 section 5). The test suite exercises http(s), file, and URN bases
// (with query components), relative paths, dot segments and absolute-path references, so
// this implements the RFC's generic algorithm rather than anything scheme-specific.

#include "schema/uri.hpp"

#include "util/ascii.hpp"
#include "util/percent.hpp"

#include <algorithm>
#include <cctype>

namespace toolport::schema::detail {
namespace {

struct UriParts {
    std::string scheme;
    bool has_authority = false;
    std::string authority;
    std::string path;
    bool has_query = false;
    std::string query;
    bool has_fragment = false;
    std::string fragment;
};

// RFC 3986 appendix B, without regular expressions.
UriParts parse(std::string_view s) {
    UriParts p;
    // scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"
    std::size_t colon = s.find(':');
    if (colon != std::string_view::npos && colon > 0 && std::isalpha(static_cast<unsigned char>(s[0]))) {
        bool ok = true;
        for (std::size_t i = 1; i < colon; ++i) {
            char c = s[i];
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.')) {
                ok = false;
                break;
            }
        }
        if (ok) {
            p.scheme = std::string(s.substr(0, colon));
            s.remove_prefix(colon + 1);
        }
    }
    std::size_t hash = s.find('#');
    if (hash != std::string_view::npos) {
        p.has_fragment = true;
        p.fragment = std::string(s.substr(hash + 1));
        s = s.substr(0, hash);
    }
    std::size_t q = s.find('?');
    if (q != std::string_view::npos) {
        p.has_query = true;
        p.query = std::string(s.substr(q + 1));
        s = s.substr(0, q);
    }
    if (s.size() >= 2 && s[0] == '/' && s[1] == '/') {
        p.has_authority = true;
        s.remove_prefix(2);
        std::size_t slash = s.find('/');
        p.authority = std::string(s.substr(0, slash));
        s = slash == std::string_view::npos ? std::string_view{} : s.substr(slash);
    }
    p.path = std::string(s);
    return p;
}

std::string compose(const UriParts& p) {
    std::string out;
    if (!p.scheme.empty()) {
        out += p.scheme;
        out += ':';
    }
    if (p.has_authority) {
        out += "//";
        out += p.authority;
    }
    out += p.path;
    if (p.has_query) {
        out += '?';
        out += p.query;
    }
    if (p.has_fragment) {
        out += '#';
        out += p.fragment;
    }
    return out;
}

// RFC 3986 section 5.2.4.
std::string remove_dot_segments(std::string_view in) {
    std::string out;
    while (!in.empty()) {
        if (in.starts_with("../")) {
            in.remove_prefix(3);
        } else if (in.starts_with("./")) {
            in.remove_prefix(2);
        } else if (in.starts_with("/./")) {
            in.remove_prefix(2);
        } else if (in == "/.") {
            in = "/";
        } else if (in.starts_with("/../") || in == "/..") {
            in = in.size() == 3 ? std::string_view("/") : in.substr(3);
            std::size_t last = out.rfind('/');
            out.erase(last == std::string::npos ? 0 : last);
        } else if (in == "." || in == "..") {
            in = {};
        } else {
            std::size_t start = in[0] == '/' ? 1 : 0;
            std::size_t next = in.find('/', start);
            std::size_t len = next == std::string_view::npos ? in.size() : next;
            out.append(in.substr(0, len));
            in.remove_prefix(len);
        }
    }
    return out;
}

// RFC 3986 section 5.2.3.
std::string merge_paths(const UriParts& base, const std::string& ref_path) {
    if (base.has_authority && base.path.empty()) return "/" + ref_path;
    std::size_t last = base.path.rfind('/');
    if (last == std::string::npos) return ref_path;
    return base.path.substr(0, last + 1) + ref_path;
}

void normalize_case(UriParts& p) {
    p.scheme = util::to_lower_ascii(p.scheme);
    // Host names are case-insensitive; userinfo is not, so only lower-case after the last '@'.
    std::size_t at = p.authority.rfind('@');
    std::size_t from = at == std::string::npos ? 0 : at + 1;
    for (std::size_t i = from; i < p.authority.size(); ++i) p.authority[i] = util::to_lower_ascii(p.authority[i]);
}

}  // namespace

bool is_absolute_uri(std::string_view uri) { return !parse(uri).scheme.empty(); }

std::string resolve_uri(std::string_view base_sv, std::string_view ref_sv) {
    UriParts ref = parse(ref_sv);
    UriParts base = parse(base_sv);
    UriParts t;
    if (!ref.scheme.empty()) {
        t = ref;
        t.path = remove_dot_segments(ref.path);
    } else {
        if (ref.has_authority) {
            t.has_authority = true;
            t.authority = ref.authority;
            t.path = remove_dot_segments(ref.path);
            t.has_query = ref.has_query;
            t.query = ref.query;
        } else {
            if (ref.path.empty()) {
                t.path = base.path;
                if (ref.has_query) {
                    t.has_query = true;
                    t.query = ref.query;
                } else {
                    t.has_query = base.has_query;
                    t.query = base.query;
                }
            } else {
                if (ref.path[0] == '/') {
                    t.path = remove_dot_segments(ref.path);
                } else {
                    t.path = remove_dot_segments(merge_paths(base, ref.path));
                }
                t.has_query = ref.has_query;
                t.query = ref.query;
            }
            t.has_authority = base.has_authority;
            t.authority = base.authority;
        }
        t.scheme = base.scheme;
    }
    t.has_fragment = ref.has_fragment;
    t.fragment = ref.fragment;
    normalize_case(t);
    return compose(t);
}

UriAndFragment split_fragment(std::string_view uri) {
    UriAndFragment out;
    std::size_t hash = uri.find('#');
    if (hash == std::string_view::npos) {
        out.uri = std::string(uri);
    } else {
        out.uri = std::string(uri.substr(0, hash));
        out.fragment = std::string(uri.substr(hash + 1));
        out.has_fragment = true;
    }
    return out;
}

std::string strip_empty_fragment(std::string_view uri) {
    if (!uri.empty() && uri.back() == '#') uri.remove_suffix(1);
    return std::string(uri);
}

std::optional<std::string> percent_decode(std::string_view s) { return util::percent_decode(s); }

}  // namespace toolport::schema::detail
