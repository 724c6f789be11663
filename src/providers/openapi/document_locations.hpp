// Where documents are and what a document may refer to: a file document to files beside
// it (relative paths, never URLs), a URL document to URLs on its own origin (never files,
// never other hosts), so a served document cannot make Toolport read local files or call
// other hosts.
#pragma once

#include <string>

#include "providers/openapi/document_error.hpp"

namespace toolport::openapi {

// http:// or https://.
bool is_url(const std::string& location);
// "scheme://host[:port]" of a URL, lower-cased; empty when `url` is not an http(s) URL.
std::string url_origin(const std::string& url);
// The URL without its query and fragment: what messages may show (a query may hold a key).
std::string url_without_query(const std::string& url);
// Where `reference` (the part of a `$ref` before '#', non-empty) points when written in
// the document at `base`. Throws DocumentError for what a document there may not refer to.
std::string resolve_location(const std::string& base, const std::string& reference);

}  // namespace toolport::openapi
