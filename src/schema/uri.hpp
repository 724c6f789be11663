#pragma once
// URI and JSON Pointer helpers for $id / $ref resolution (RFC 3986, RFC 6901).
// Internal to src/schema.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace toolport::schema::detail {

// Resolves `ref` against the absolute URI `base` (RFC 3986 section 5.2, strict mode) and
// normalizes the result (lower-case scheme and host, dot segments removed).
std::string resolve_uri(std::string_view base, std::string_view ref);

// True when `uri` has a scheme (so it needs no base to be resolved).
bool is_absolute_uri(std::string_view uri);

// Splits "a#b" into {"a", "b"}; has_fragment tells "a#" from "a".
struct UriAndFragment {
    std::string uri;
    std::string fragment;
    bool has_fragment = false;
};
UriAndFragment split_fragment(std::string_view uri);

// "a#" -> "a"; other URIs unchanged. Used to normalize document keys and $ids.
std::string strip_empty_fragment(std::string_view uri);

// Decodes %XX escapes; returns nullopt for a malformed escape.
std::optional<std::string> percent_decode(std::string_view s);

}  // namespace toolport::schema::detail
