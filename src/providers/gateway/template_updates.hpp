// Which URIs, as the gateway serves them, an upstream's notifications/resources/updated
// concerns when the URI is not a listed resource but belongs to one of its resource
// templates. The gateway serves a template under its own pattern, or as "prefix+pattern"
// when another upstream has the same pattern; a client then reads, and subscribes to, the
// URI with that same "prefix+" in front. So the update goes out under each form whose
// template (the upstream's own pattern) matches the URI: usually exactly one.
#pragma once

#include <string>
#include <vector>

namespace toolport::gateway {

struct ServedTemplate {
    std::string served;    // the pattern as the gateway serves it: `original` or "prefix+" + it
    std::string original;  // the upstream's own pattern
};

// `uri`: as the upstream named it; `templates`: that upstream's templates, in the order to
// try. The served URIs, each once, in that order; empty when no template matches.
std::vector<std::string> served_uris_of_update(const std::string& uri, const std::vector<ServedTemplate>& templates);

}  // namespace toolport::gateway
