// The headers a request of the stateless revision (2026-07-28) carries over HTTP besides
// its body, so that proxies and gateways can route it without reading JSON: Mcp-Method
// mirrors the method, Mcp-Name the tool or prompt name or the resource URI it addresses,
// and a tools/call mirrors each argument whose inputSchema property is marked
// "x-mcp-header": "<Name>" in an Mcp-Param-<Name> header. A value that is not plain
// visible ASCII travels as "=?base64?<base64 of its UTF-8>?=".
//
// Which arguments a tool mirrors is only known from its inputSchema, so the HTTP
// transport shows every tools/list result it carries to learn_tools(); a tools/call of a
// tool never listed goes without Mcp-Param-* headers (the server then names the one it
// misses).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/json.hpp"

namespace toolport::client {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

class StatelessHttpHeaders {
public:
    // Remembers the mirrored arguments of every tool in a tools/list result's "tools"
    // (replacing what an earlier listing said of the same tool). A marking whose header
    // name is not an RFC 9110 token, or that names a header another property of the tool
    // already uses, is ignored with a warning: it could not be sent as a header anyway.
    void learn_tools(const Json& tools);

    // Mcp-Method, Mcp-Name and Mcp-Param-* for one outgoing request message.
    HeaderList for_request(const Json& request) const;

private:
    struct Mirror {
        std::string property;
        std::string header;  // without the "Mcp-Param-" prefix
    };
    std::map<std::string, std::vector<Mirror>> mirrors_;  // by tool name
};

// Why a tool's "x-mcp-header" markings make it unusable in the stateless revision (SEP-2243),
// or nullopt when they are fine (or it has none): a marking must be a non-empty RFC 9110
// token of ASCII characters, sit on a property of primitive type (string, integer or
// boolean: not number, null, object or array), and name a header no other property of the
// tool names (headers ignore case). A client leaves such a tool out of its listing and does
// not call it.
std::optional<std::string> x_mcp_header_problem(const Json& tool);

// `value` as an HTTP field value: as it is when it is printable ASCII without leading or
// trailing white space (and does not itself look encoded), base64 in the sentinel otherwise.
std::string encode_mcp_header_value(std::string_view value);

}  // namespace toolport::client
