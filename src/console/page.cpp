#include "console/page.hpp"

#include "console/console_reply.hpp"

namespace toolport::console {

// The page's files are not part of this build yet: every page path is answered 404 (the
// API under api/ is served all the same).
HttpAnswer serve_static(std::string_view path, const HttpRequestView& request) {
    (void)path;
    return html_answer(request, 404, "Not Found",
                       "This build of Toolport has no console page; its JSON API is served under api/.");
}

}  // namespace toolport::console
