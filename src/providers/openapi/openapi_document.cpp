#include "providers/openapi/openapi_document.hpp"

#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "async/completion.hpp"
#include "http_client/http_client.hpp"
#include "document/document.hpp"
#include "util/percent.hpp"
#include "util/ascii.hpp"

namespace toolport::openapi {

namespace {

namespace fs = std::filesystem;

// Refs followed inside one another before the chain is cut like a cycle: keeps the
// recursion (and the stack) bounded for documents built to be deep.
constexpr std::size_t kMaxActiveRefs = 32;
// Values one resolve() may produce: a few shared schemas referenced from everywhere can
// otherwise expand into millions.
constexpr std::size_t kMaxExpandedValues = 200'000;
// Documents one document may pull in besides itself.
constexpr std::size_t kMaxOtherDocuments = 32;

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// "other.yaml#/a/b" → {"other.yaml", "/a/b"} with the fragment percent-decoded.
std::pair<std::string, std::string> split_ref(const std::string& ref) {
    auto hash = ref.find('#');
    std::string where = ref.substr(0, hash);
    std::string fragment = hash == std::string::npos ? "" : ref.substr(hash + 1);
    auto decoded = util::percent_decode(fragment);
    if (!decoded) throw DocumentError(fmt::format("$ref \"{}\": bad percent-encoding", ref));
    return {where, *decoded};
}

// Every `$ref` string in `value`, once each.
void collect_refs(const Json& value, std::set<std::string>& refs) {
    if (value.is_object()) {
        for (const auto& [key, member] : value.items()) {
            if (key == "$ref" && member.is_string()) refs.insert(member.get<std::string>());
            else collect_refs(member, refs);
        }
    } else if (value.is_array()) {
        for (const auto& item : value) collect_refs(item, refs);
    }
}

// Values copied as written: they are data (an example may well contain a "$ref" key).
bool is_literal_keyword(const std::string& key) {
    return key == "example" || key == "examples" || key == "enum" || key == "const" || key == "default";
}

// Members whose value maps names to objects: a child named "default" there (the default
// response, a property called "enum") is an object like any other, not data.
bool maps_names(const std::string& key) {
    static const std::set<std::string> keys = {"properties",
                                               "patternProperties",
                                               "responses",
                                               "paths",
                                               "$defs",
                                               "definitions",
                                               "schemas",
                                               "parameters",
                                               "headers",
                                               "content",
                                               "callbacks",
                                               "links",
                                               "encoding",
                                               "securitySchemes",
                                               "requestBodies",
                                               "variables",
                                               "dependentSchemas",
                                               "webhooks",
                                               "pathItems"};
    return keys.count(key) > 0;
}

}  // namespace

ParsedDocument parse_document_text(const std::string& text, const std::string& location) {
    const auto first = text.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
    const bool json = util::to_lower_ascii(url_without_query(location)).ends_with(".json") ||
                      (first != std::string::npos && text[first] == '{');
    try {
        auto doc = json ? document::parse_json(text) : document::parse_yaml(text);
        return {std::move(doc.value), std::move(doc.lines)};
    } catch (const document::DocumentError& e) {
        throw DocumentError(e.line() > 0 ? fmt::format("{}:{}: {}", url_without_query(location), e.line(), e.what())
                                         : fmt::format("{}: {}", url_without_query(location), e.what()));
    }
}

DocumentSet::DocumentSet(std::string root_location, ParsedDocument root)
    : root_location_(std::move(root_location)), root_(std::move(root)) {
    const Json& value = root_.value;
    // A file by its name: messages reach /health and clients, and a path may name a home.
    const std::string where = is_url(root_location_) ? url_without_query(root_location_)
                                                     : fs::path(root_location_).filename().string();
    if (!value.is_object()) throw DocumentError(where + ": not an OpenAPI document (not a mapping)");
    if (value.contains("swagger")) {
        throw DocumentError(where + ": Swagger 2.0 documents are not supported; convert it to OpenAPI 3");
    }
    auto version = value.find("openapi");
    if (version == value.end() || !version->is_string()) {
        throw DocumentError(where + ": not an OpenAPI document (no `openapi` version field)");
    }
    const std::string v = version->get<std::string>();
    if (starts_with(v, "3.0")) version_ = "3.0";
    else if (starts_with(v, "3.1")) version_ = "3.1";
    else throw DocumentError(fmt::format("{}: OpenAPI version {} is not supported (3.0 and 3.1 are)", where, v));
    if (value.contains("paths") && !value["paths"].is_object())
        throw DocumentError(where + ": `paths` is not a mapping");
}

int DocumentSet::line_of(const std::string& pointer) const {
    auto it = root_.lines.find(pointer);
    return it == root_.lines.end() ? 0 : it->second;
}

std::vector<std::string> DocumentSet::missing() const {
    std::set<std::string> wanted;
    auto scan = [&](const std::string& location, const Json& value) {
        std::set<std::string> refs;
        collect_refs(value, refs);
        for (const auto& ref : refs) {
            try {
                const auto where = split_ref(ref).first;
                if (!where.empty()) wanted.insert(resolve_location(location, where));
            } catch (const DocumentError&) {
                // Refused or malformed refs fail when resolved, naming the operation that uses them.
            }
        }
    };
    scan(root_location_, root_.value);
    for (const auto& [location, value] : others_) scan(location, value);
    std::vector<std::string> out;
    for (const auto& location : wanted) {
        if (location == root_location_ || others_.count(location) || failures_.count(location)) continue;
        if (others_.size() + failures_.size() + out.size() >= kMaxOtherDocuments) {
            continue;  // left missing for good: resolve() says the document was not loaded
        }
        out.push_back(location);
    }
    return out;
}

void DocumentSet::add(const std::string& location, Json value) { others_[location] = std::move(value); }

void DocumentSet::add_failure(const std::string& location, std::string why) { failures_[location] = std::move(why); }

const Json& DocumentSet::document_at(const std::string& location) const {
    if (location == root_location_) return root_.value;
    if (auto it = others_.find(location); it != others_.end()) return it->second;
    if (auto it = failures_.find(location); it != failures_.end()) throw DocumentError(it->second);
    throw DocumentError(fmt::format("{} was not loaded (a document may pull in at most {} others)",
                                    url_without_query(location), kMaxOtherDocuments));
}

Json DocumentSet::resolve(const Json& node, const std::string& location) const {
    std::vector<std::string> active;
    std::size_t budget = kMaxExpandedValues;
    return resolve_node(node, location, active, budget);
}

Json DocumentSet::resolve_node(const Json& node, const std::string& location, std::vector<std::string>& active,
                               std::size_t& budget, bool names_map) const {
    if (budget == 0) {
        throw DocumentError(fmt::format("$refs expand to more than {} values", kMaxExpandedValues));
    }
    --budget;
    if (node.is_array()) {
        Json out = Json::array();
        for (const auto& item : node) out.push_back(resolve_node(item, location, active, budget));
        return out;
    }
    if (!node.is_object()) return node;
    if (names_map) {
        Json out = Json::object();
        for (const auto& [name, member] : node.items()) out[name] = resolve_node(member, location, active, budget);
        return out;
    }
    auto ref = node.find("$ref");
    if (ref == node.end() || !ref->is_string()) {
        Json out = Json::object();
        for (const auto& [key, member] : node.items()) {
            out[key] = is_literal_keyword(key) ? member
                                               : resolve_node(member, location, active, budget, maps_names(key));
        }
        return out;
    }
    const std::string text = ref->get<std::string>();
    auto [where, pointer] = split_ref(text);
    const std::string target_location = where.empty() ? location : resolve_location(location, where);
    const std::string key = target_location + "#" + pointer;
    Json out;
    if (std::find(active.begin(), active.end(), key) != active.end() || active.size() >= kMaxActiveRefs) {
        out = {{"description", fmt::format("(recursive: {}, not expanded further)", text)}};
    } else {
        const Json& document = document_at(target_location);
        const Json* target = nullptr;
        try {
            target = &document.at(Json::json_pointer(pointer));
        } catch (const Json::exception&) {
            throw DocumentError(fmt::format("$ref \"{}\" points to nothing", text));
        }
        active.push_back(key);
        out = resolve_node(*target, target_location, active, budget);
        active.pop_back();
    }
    // 3.1 lets a $ref have siblings (a description, say): they override the target's.
    if (out.is_object()) {
        for (const auto& [k, member] : node.items()) {
            if (k == "$ref") continue;
            out[k] = is_literal_keyword(k) ? member : resolve_node(member, location, active, budget, maps_names(k));
        }
    }
    return out;
}

std::string server_url(const DocumentSet& docs, const std::string& configured) {
    if (!configured.empty()) return configured;
    std::string url = "/";
    const Json& root = docs.root();
    if (auto servers = root.find("servers"); servers != root.end() && servers->is_array() && !servers->empty() &&
                                             (*servers)[0].is_object() && (*servers)[0].contains("url") &&
                                             (*servers)[0]["url"].is_string()) {
        const Json& server = (*servers)[0];
        url = server["url"].get<std::string>();
        const Json variables = server.value("variables", Json::object());
        for (auto open = url.find('{'); open != std::string::npos; open = url.find('{', open)) {
            const auto close = url.find('}', open);
            if (close == std::string::npos) break;
            const std::string name = url.substr(open + 1, close - open - 1);
            const Json variable = variables.is_object() ? variables.value(name, Json::object()) : Json::object();
            if (!variable.is_object() || !variable.contains("default") || !variable["default"].is_string()) {
                throw DocumentError(fmt::format("servers[0] variable {} has no default; set base_url", name));
            }
            url.replace(open, close - open + 1, variable["default"].get<std::string>());
            open += variable["default"].get<std::string>().size();
        }
    }
    if (is_url(url)) return url;
    if (!is_url(docs.root_location())) {
        throw DocumentError(
            fmt::format("the document's server URL \"{}\" is relative and the document is a file; "
                        "set base_url",
                        url));
    }
    return resolve_location(docs.root_location(), url.empty() ? "/" : url);
}

DocumentSet load_file_document(const std::string& path) {
    const std::string location = fs::absolute(fs::path(path)).lexically_normal().string();
    // Named by its file name in messages (they reach /health; a path may name a home).
    const std::string name = fs::path(location).filename().string();
    std::string root_text;
    try {
        root_text = document::read_text_file(location);
    } catch (const document::DocumentError& e) {
        throw DocumentError(fmt::format("{}: {}", name, e.what()));
    }
    DocumentSet docs(location, parse_document_text(root_text, name));
    // What the document refers to stays inside its folder; each other file is named by
    // its path from there in messages.
    const std::string folder = fs::path(location).parent_path().string();
    for (auto missing = docs.missing(); !missing.empty(); missing = docs.missing()) {
        for (const auto& other : missing) {
            const std::string shown = fs::path(other).lexically_relative(folder).string();
            try {
                const std::string real = file_inside_folder(other, folder);
                std::string text;
                try {
                    text = document::read_text_file(real);
                } catch (const document::DocumentError& e) {
                    throw DocumentError(fmt::format("{}: {}", shown, e.what()));
                }
                docs.add(other, parse_document_text(text, shown).value);
            } catch (const DocumentError& e) {
                docs.add_failure(other, e.what());
            }
        }
    }
    return docs;
}

namespace {

Task<std::string> fetch_text(http_client::HttpClient& http, const std::string& url, CancelToken* cancel) {
    http_client::Request request{.method = "GET",
                                 .url = url,
                                 .headers = {{"Accept", "application/json, application/yaml;q=0.9, */*;q=0.5"}}};
    http_client::CallOptions options;
    options.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    options.cancel = cancel;
    options.max_response_bytes = document::kMaxDocumentBytes;
    http_client::Response response;
    try {
        response = co_await http.fetch(std::move(request), std::move(options));
    } catch (const http_client::HttpError& e) {
        throw DocumentError(fmt::format("{}: {}", url_without_query(url), e.what()));
    } catch (const http_client::ResponseTooLarge&) {
        throw DocumentError(
            fmt::format("{}: larger than {} MiB", url_without_query(url), document::kMaxDocumentBytes >> 20));
    }
    if (response.status < 200 || response.status > 299) {
        throw DocumentError(fmt::format("{}: HTTP {}", url_without_query(url), response.status));
    }
    co_return std::move(response.body);
}

}  // namespace

Task<DocumentSet> load_url_document(http_client::HttpClient& http, std::string url, CancelToken* cancel) {
    url = url.substr(0, url.find('#'));
    DocumentSet docs(url, parse_document_text(co_await fetch_text(http, url, cancel), url));
    for (auto missing = docs.missing(); !missing.empty(); missing = docs.missing()) {
        for (const auto& other : missing) {
            try {
                docs.add(other, parse_document_text(co_await fetch_text(http, other, cancel), other).value);
            } catch (const DocumentError& e) {
                docs.add_failure(other, e.what());
            }
        }
    }
    co_return docs;
}

}  // namespace toolport::openapi
