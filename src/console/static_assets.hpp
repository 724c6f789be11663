// The console's page: the files web/console/ builds (index.html, its script, its styles),
// embedded in the binary at build time (web/console/embed.cmake) so that nothing is fetched
// from anywhere at run time. The console's HTTP handler serves them under {console.path}/.
#pragma once

#include <string_view>

namespace toolport::console {

struct StaticAsset {
    std::string_view path;          // relative to the console root: "index.html", "assets/app.js"
    std::string_view content_type;  // "text/html; charset=utf-8", ...
    std::string_view gzip_body;     // the file, gzip-compressed at build time
    std::string_view etag;          // a strong ETag of the content, quoted
};

// The built console files embedded at build time; nullptr when `path` is not one of them.
const StaticAsset* find_static_asset(std::string_view path);

}  // namespace toolport::console
