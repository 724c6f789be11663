#include "providers/openapi/request_builder.hpp"

#include <fmt/format.h>

#include "server/tool_error.hpp"
#include "util/base64.hpp"
#include "util/http_text.hpp"
#include "util/percent.hpp"

namespace toolport::openapi {

namespace {

// A scalar as the text OpenAPI serializes it with (strings unquoted, JSON otherwise).
std::string scalar_text(const Json& value) {
    if (value.is_string()) return value.get<std::string>();
    if (value.is_null()) return {};
    return value.dump();
}

// One path segment: percent_encode leaves '.' alone (unreserved), so "." and ".." would
// still be read as dot segments; they are encoded too.
std::string path_value(const std::string& text) {
    if (!text.empty() && text.find_first_not_of('.') == std::string::npos) {
        std::string out;
        for (std::size_t i = 0; i < text.size(); ++i) out += "%2E";
        return out;
    }
    return util::percent_encode(text);
}

// The simple style (path, header): arrays "a,b", objects "k,v,k2,v2" or, exploded,
// "k=v,k2=v2"; `encode` applied to each piece, the separators left as they are.
std::string simple_style(const Json& value, bool explode, const std::function<std::string(const std::string&)>& encode) {
    std::string out;
    auto append = [&](const std::string& piece) { out += (out.empty() ? "" : ",") + piece; };
    if (value.is_array()) {
        for (const auto& item : value) append(encode(scalar_text(item)));
    } else if (value.is_object()) {
        for (const auto& [k, v] : value.items()) {
            if (explode) append(encode(k) + "=" + encode(scalar_text(v)));
            else append(encode(k) + "," + encode(scalar_text(v)));
        }
    } else {
        out = encode(scalar_text(value));
    }
    return out;
}

void add_query(std::string& query, const std::string& encoded_name, const std::string& encoded_value) {
    query += (query.empty() ? "" : "&") + encoded_name + "=" + encoded_value;
}

void add_query_parameter(std::string& query, const Parameter& p, const Json& value) {
    const auto enc = [](const std::string& s) { return util::percent_encode(s); };
    const std::string name = enc(p.name);
    if (p.style == "json") return add_query(query, name, enc(value.dump()));
    if (value.is_array()) {
        if (p.style == "form" && p.explode) {
            for (const auto& item : value) add_query(query, name, enc(scalar_text(item)));
            return;
        }
        const char* separator = p.style == "spaceDelimited" ? "%20" : p.style == "pipeDelimited" ? "|" : ",";
        std::string joined;
        for (const auto& item : value) joined += (joined.empty() ? "" : separator) + enc(scalar_text(item));
        return add_query(query, name, joined);
    }
    if (value.is_object()) {
        if (p.style == "deepObject") {
            for (const auto& [k, v] : value.items()) add_query(query, name + "[" + enc(k) + "]", enc(scalar_text(v)));
        } else if (p.explode) {
            for (const auto& [k, v] : value.items()) add_query(query, enc(k), enc(scalar_text(v)));
        } else {
            add_query(query, name, simple_style(value, false, enc));
        }
        return;
    }
    add_query(query, name, enc(scalar_text(value)));
}

std::string header_value(const Parameter& p, const Json& value) {
    std::string text = p.style == "json" ? value.dump()
                                         : simple_style(value, p.explode, [](const std::string& s) { return s; });
    if (util::has_control_chars(text)) {
        throw ToolError(ToolErrorCode::invalid_argument,
                        fmt::format("{} may not contain control characters (it is sent as an HTTP header)", p.argument))
            .parameter(p.argument)
            .suggest("Remove line breaks and other control characters from the value.");
    }
    return text;
}

const Json* argument(const Json& args, const std::string& name) {
    if (!args.is_object()) return nullptr;
    auto it = args.find(name);
    return it == args.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace

BuiltRequest build_request(const Operation& op, const Json& args, const std::string& base_url,
                           const SecuritySchemes& schemes, const SecretLookup& secret_of) {
    BuiltRequest built;
    auto& request = built.request;
    request.method = op.method;

    // Path.
    std::string path;
    for (std::size_t i = 0; i < op.path.size();) {
        const auto open = op.path.find('{', i);
        if (open == std::string::npos) {
            path += op.path.substr(i);
            break;
        }
        const auto close = op.path.find('}', open);
        if (close == std::string::npos) {
            path += op.path.substr(i);
            break;
        }
        path += op.path.substr(i, open - i);
        const std::string name = op.path.substr(open + 1, close - open - 1);
        auto p = std::find_if(op.parameters.begin(), op.parameters.end(),
                              [&](const Parameter& q) { return q.location == "path" && q.name == name; });
        const std::string arg_name = p == op.parameters.end() ? name : p->argument;
        const Json* value = argument(args, arg_name);
        if (!value) {
            throw ToolError(ToolErrorCode::missing_parameter, fmt::format("{} is required (part of the path)", arg_name))
                .parameter(arg_name);
        }
        const bool known = p != op.parameters.end();
        path += known && p->style == "json" ? path_value(value->dump())
                                            : simple_style(*value, known && p->explode, path_value);
        i = close + 1;
    }

    // Query, headers, cookies.
    std::string query;
    std::string cookies;
    auto add_cookie = [&](const std::string& name, const std::string& value) {
        cookies += (cookies.empty() ? "" : "; ") + name + "=" + util::percent_encode(value);
    };
    for (const auto& p : op.parameters) {
        const Json* value = argument(args, p.argument);
        if (!value || p.location == "path") continue;
        if (p.location == "query") add_query_parameter(query, p, *value);
        else if (p.location == "header") request.headers.emplace_back(p.name, header_value(p, *value));
        else if (p.location == "cookie") add_cookie(p.name, header_value(p, *value));
    }

    // Body.
    if (op.body.layout == BodyLayout::merged) {
        Json body = Json::object();
        for (const auto& name : op.body.properties) {
            // An explicit null stays in the body (a nullable field set to null, "clear the
            // parent"); in the path, query and headers null means "not given".
            if (args.is_object() && args.contains(name)) body[name] = args[name];
        }
        if (!body.empty() || op.body.required) request.body = body.dump();
    } else if (op.body.layout == BodyLayout::nested) {
        if (const Json* value = argument(args, op.body.argument)) request.body = value->dump();
    }
    if (!request.body.empty()) request.headers.emplace_back("Content-Type", op.body.media_type);
    request.headers.emplace_back("Accept", op.expects_json ? "application/json, */*;q=0.5" : "*/*");

    // Credentials: the first alternative whose every scheme has its secret.
    const std::vector<std::string>* chosen = nullptr;
    std::vector<std::string> first_missing;
    for (const auto& alternative : op.security) {
        std::vector<std::string> missing;
        for (const auto& name : alternative) {
            auto s = schemes.find(name);
            if (s == schemes.end()) missing.push_back("(scheme " + name + " is not supported)");
            else if (auto secret = secret_of(s->second.env_var); !secret || secret->empty())
                missing.push_back(s->second.env_var);
        }
        if (missing.empty()) {
            chosen = &alternative;
            break;
        }
        if (first_missing.empty()) first_missing = std::move(missing);
    }
    if (!op.security.empty() && !chosen) {
        std::string list;
        for (const auto& m : first_missing) list += (list.empty() ? "" : ", ") + m;
        throw ToolError(ToolErrorCode::missing_api_key,
                        fmt::format("{} needs credentials the server does not have: {}", op.tool_name, list))
            .suggest(fmt::format("Set {} in the server's environment (or name the variable under the source's "
                                 "`credentials:` setting) and restart it.",
                                 list));
    }
    if (chosen) {
        for (const auto& name : *chosen) {
            const SecurityScheme& s = schemes.at(name);
            const std::string secret = *secret_of(s.env_var);
            built.secrets.push_back(secret);
            built.env_vars.push_back(s.env_var);
            switch (s.kind) {
                case SecurityScheme::Kind::api_key_header: request.headers.emplace_back(s.parameter, secret); break;
                case SecurityScheme::Kind::api_key_query:
                    add_query(query, util::percent_encode(s.parameter), util::percent_encode(secret));
                    built.secrets.push_back(util::percent_encode(secret));
                    break;
                case SecurityScheme::Kind::api_key_cookie: add_cookie(s.parameter, secret); break;
                case SecurityScheme::Kind::bearer:
                    request.headers.emplace_back("Authorization", "Bearer " + secret);
                    break;
                case SecurityScheme::Kind::basic:
                    request.headers.emplace_back("Authorization", "Basic " + util::base64_encode(secret));
                    built.secrets.push_back(util::base64_encode(secret));
                    // The password alone, should an API quote it back.
                    if (auto colon = secret.find(':'); colon != std::string::npos && secret.size() - colon > 4) {
                        built.secrets.push_back(secret.substr(colon + 1));
                    }
                    break;
            }
        }
    }
    if (!cookies.empty()) request.headers.emplace_back("Cookie", cookies);

    std::string base = base_url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    request.url = base + path + (query.empty() ? "" : "?" + query);
    return built;
}

}  // namespace toolport::openapi
