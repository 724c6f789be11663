#include "providers/gateway/template_updates.hpp"

#include <algorithm>

#include "server/uri_template.hpp"

namespace toolport::gateway {

std::vector<std::string> served_uris_of_update(const std::string& uri, const std::vector<ServedTemplate>& templates) {
    std::vector<std::string> served;
    for (const auto& t : templates) {
        // Parsed here, per notification: an upstream has a few templates, and updates are rare
        // next to reads (which use the registry's parsed forms).
        if (!UriTemplate(t.original).match(uri)) continue;
        const bool prefixed = t.served.size() > t.original.size() &&
                              t.served.compare(t.served.size() - t.original.size(), t.original.size(), t.original) == 0;
        std::string form = prefixed ? t.served.substr(0, t.served.size() - t.original.size()) + uri : uri;
        if (std::find(served.begin(), served.end(), form) == served.end()) served.push_back(std::move(form));
    }
    return served;
}

}  // namespace toolport::gateway
