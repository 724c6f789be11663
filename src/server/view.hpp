// ViewSpec: what a view (a gateway profile) serves of the catalogue. A view is one named
// subset of every primitive, not only of the tools: a client in it lists, reads, gets,
// completes and subscribes to nothing else, and hears no notification of anything else
// (McpServer::visible).
#pragma once

#include <functional>
#include <string>

namespace toolport {

struct ToolSpec;

struct ViewSpec {
    // The tools it serves.
    std::function<bool(const ToolSpec& tool)> tools;
    // The sources (ToolSpec::source, ResourceSpec::source, ...) whose resources, resource
    // templates, prompts and extension methods it serves. Unset: the sources of the tools
    // it serves, as the registry holds them now. Entries of no source (the server's own)
    // are served in every view.
    std::function<bool(const std::string& source)> sources;
};

}  // namespace toolport
