// How a registry entry runs: its server.json (server_json.hpp) and the upstream's
// configuration turned into what a `command:` or `url:` upstream is — a program and its
// arguments (an argv, never a shell line) with environment variables, or a URL with
// headers.
//
//  - remotes[] (streamable-http, sse): the URL, its {variables} and headers filled in;
//  - packages[] by registryType: npm through `npx -y <identifier>@<version>`, pypi through
//    `uvx <identifier>==<version>`, oci through `docker run -i --rm` (or podman) with each
//    environment variable passed by name; runtimeArguments after the runner,
//    packageArguments after the package.
//
// Values come from the upstream's configuration: `arguments:` by a positional argument's
// valueHint, a named argument's flag (with or without its dashes) or a variable's name;
// `env:` and `headers:` by name. An environment variable the configuration does not give is
// taken from Toolport's own environment when set there (the way for secrets: a file never
// holds them), else its default. A required input with none of these fails with
// LaunchError naming it and where to give it.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "providers/gateway/registry/server_json.hpp"

namespace toolport::registry {

struct LaunchConfig {
    std::string upstream;      // the upstream's name, for messages
    std::string run = "auto";  // auto, remote, npm, pypi, oci
    std::map<std::string, std::string> arguments;
    std::map<std::string, std::string> env;
    std::map<std::string, std::string> headers;
    // Toolport's environment (std::getenv by default).
    std::function<std::optional<std::string>(const std::string&)> environment;
    // Whether a program is on PATH (a search of PATH by default).
    std::function<bool(const std::string&)> installed;
};

struct Launch {
    std::string transport;  // stdio, streamable-http, sse
    std::vector<std::string> argv;
    std::map<std::string, std::string> env;
    std::string url;
    std::vector<std::pair<std::string, std::string>> headers;
    std::vector<std::string> secrets;  // values of secret inputs, to redact
    std::string what;                  // "npm @scope/pkg@1.2.3", "remote https://...", for logs
};

struct LaunchError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

Launch plan_launch(const ServerJson& server, const LaunchConfig& config);

// Whether `program` is an executable file in a directory of PATH.
bool on_path(const std::string& program);

}  // namespace toolport::registry
