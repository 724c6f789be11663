// A server.json (the MCP Registry's description of a server) as Toolport reads it, from
// every published `$schema` release: 2025-07-09 (snake_case: registry_type,
// package_arguments, is_required..., and the earlier drafts' registry_name, a package's
// `name`, version_detail, remotes' transport_type), 2025-09-16 onwards (camelCase:
// registryType, packageArguments, isRequired...), 2025-10-11/-17 (a package's version
// optional), 2025-12-11 (remotes' URL variables). Unknown fields are ignored, as the schema
// allows later releases to add them.
//
// This is the shared data type of the registry's entries (owned by the consuming side:
// registry_launch.hpp turns one into an upstream's command or URL).
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "util/json.hpp"

namespace toolport::registry {

// An input: a package argument, an environment variable, a header, or a URL variable.
struct ServerInput {
    std::string type;  // arguments: "positional" or "named"; "" for the others
    std::string name;  // named argument's flag ("--port"), environment variable or header name
    std::string value_hint;
    std::string description;
    std::string value;          // fixed by the publisher ({variables} substituted)
    std::string default_value;  // used when configuration gives nothing
    std::string format;         // string, number, boolean, filepath
    bool required = false;
    bool secret = false;
    bool repeated = false;
    std::map<std::string, ServerInput> variables;  // {name} in value
};

struct ServerPackage {
    std::string registry_type;  // npm, pypi, oci, nuget, mcpb ("docker" of the drafts is oci)
    std::string registry_base_url;
    std::string identifier;  // package name, image reference or download URL
    std::string version;     // "" when the identifier carries it (oci) or none applies
    std::string runtime_hint;
    std::string transport = "stdio";  // stdio, streamable-http, sse
    std::string transport_url;
    std::vector<ServerInput> runtime_arguments;
    std::vector<ServerInput> package_arguments;
    std::vector<ServerInput> environment_variables;
};

struct ServerRemote {
    std::string type;  // streamable-http or sse
    std::string url;
    std::vector<ServerInput> headers;
    std::map<std::string, ServerInput> variables;
};

struct ServerJson {
    std::string schema;  // $schema as given ("" when absent)
    std::string name;
    std::string title;
    std::string description;
    std::string version;
    std::vector<ServerPackage> packages;
    std::vector<ServerRemote> remotes;
};

struct ServerJsonError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Reads one server.json object; throws ServerJsonError naming the field that is missing or
// of the wrong type.
ServerJson read_server_json(const Json& server);

}  // namespace toolport::registry
