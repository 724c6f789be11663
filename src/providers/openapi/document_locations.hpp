// Where documents are and what a document may refer to: a file document to files in its
// folder (relative paths, never URLs, never out of the folder, by `..` or by a symbolic
// link), a URL document to URLs on its own origin (never files, never other hosts), so a
// document cannot make Toolport read other local files or call other hosts.
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

// A file a file document refers to (resolve_location's answer: percent-decoded and
// normalised), checked to be inside `folder`, the folder of the document the operator
// named: first by its path, then by where it really is once symbolic links are followed
// (realpath), and to be a regular file. Returns the real path to read. Throws
// DocumentError naming the file relative to `folder` (never by its absolute path).
std::string file_inside_folder(const std::string& path, const std::string& folder);

}  // namespace toolport::openapi
