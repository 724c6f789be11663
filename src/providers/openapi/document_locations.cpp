#include "providers/openapi/document_locations.hpp"

#include <filesystem>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "http_client/url.hpp"
#include "util/ascii.hpp"
#include "util/percent.hpp"

namespace toolport::openapi {

namespace {

namespace fs = std::filesystem;

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// RFC 3986 §5.2.4, on a path starting with '/'.
std::string remove_dot_segments(const std::string& path) {
    std::vector<std::string> out;
    std::size_t start = 1;
    while (start <= path.size()) {
        std::size_t end = path.find('/', start);
        if (end == std::string::npos) end = path.size();
        std::string segment = path.substr(start, end - start);
        const bool last = end == path.size();
        if (segment == "..") {
            if (!out.empty()) out.pop_back();
            if (last) out.emplace_back();
        } else if (segment == ".") {
            if (last) out.emplace_back();
        } else {
            out.push_back(std::move(segment));
        }
        start = end + 1;
    }
    std::string joined;
    for (const auto& s : out) joined += "/" + s;
    return joined.empty() ? "/" : joined;
}

}  // namespace

std::string url_without_query(const std::string& url) { return url.substr(0, url.find_first_of("?#")); }

bool is_url(const std::string& location) {
    const std::string l = util::to_lower_ascii(location.substr(0, 8));
    return starts_with(l, "http://") || starts_with(l, "https://");
}

std::string url_origin(const std::string& url) {
    if (!is_url(url)) return {};
    try {
        return http_client::parse_url(url).origin();
    } catch (const std::invalid_argument&) {
        return {};
    }
}

std::string resolve_location(const std::string& base, const std::string& reference) {
    const bool has_scheme = [&] {
        auto colon = reference.find(':');
        return colon != std::string::npos && reference.find_first_of("/?#") > colon;
    }();
    if (is_url(base)) {
        const std::string origin = url_origin(base);
        if (is_url(reference)) {
            if (url_origin(reference) != origin) {
                throw DocumentError(fmt::format("$ref to \"{}\": a document may refer only to its own origin ({})",
                                                url_without_query(reference), origin));
            }
            return reference;
        }
        if (has_scheme || starts_with(reference, "//")) {
            throw DocumentError(fmt::format("$ref to \"{}\": a document may refer only to its own origin ({})",
                                            url_without_query(reference), origin));
        }
        const std::string without_query = url_without_query(base);
        const auto path_start = without_query.find('/', without_query.find("://") + 3);
        const std::string base_path = path_start == std::string::npos ? "/" : without_query.substr(path_start);
        const std::string query = reference.find('?') == std::string::npos ? "" : reference.substr(reference.find('?'));
        const std::string ref_path = reference.substr(0, reference.find('?'));
        std::string path = starts_with(ref_path, "/") ? ref_path
                                                      : base_path.substr(0, base_path.rfind('/') + 1) + ref_path;
        return origin + remove_dot_segments(path) + query;
    }
    if (is_url(reference) || has_scheme || starts_with(reference, "/")) {
        throw DocumentError(
            fmt::format("$ref to \"{}\": a document read from a file may refer only to files "
                        "beside it, by relative path",
                        url_without_query(reference)));
    }
    auto decoded = util::percent_decode(reference);
    if (!decoded) throw DocumentError(fmt::format("$ref to \"{}\": bad percent-encoding", reference));
    return (fs::path(base).parent_path() / *decoded).lexically_normal().string();
}

namespace {

// `path` below `folder` (both absolute and normal): not `folder` itself, no `..` step.
bool below(const fs::path& path, const fs::path& folder) {
    const fs::path relative = path.lexically_relative(folder);
    if (relative.empty() || relative == ".") return false;
    return *relative.begin() != "..";
}

}  // namespace

std::string file_inside_folder(const std::string& path, const std::string& folder) {
    const fs::path lexical = fs::path(path).lexically_normal();
    const fs::path home = fs::path(folder).lexically_normal();
    const std::string shown = lexical.lexically_relative(home).string();
    if (!below(lexical, home)) {
        throw DocumentError(
            fmt::format("\"{}\" is outside the document's folder (a $ref may point only to files in it); "
                        "refused",
                        shown));
    }
    std::error_code ec;
    const fs::path real_home = fs::canonical(home, ec);
    if (ec) throw DocumentError("the document's folder cannot be read");
    const fs::path real = fs::canonical(lexical, ec);
    if (ec) throw DocumentError(fmt::format("\"{}\" cannot be read (missing or not permitted)", shown));
    if (!below(real, real_home)) {
        throw DocumentError(fmt::format("\"{}\" is a symbolic link out of the document's folder; refused", shown));
    }
    if (!fs::is_regular_file(real, ec))
        throw DocumentError(fmt::format("\"{}\" is not a regular file; refused", shown));
    return real.string();
}

}  // namespace toolport::openapi
