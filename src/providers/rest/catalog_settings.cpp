#include "providers/rest/catalog_settings.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "http_client/url.hpp"
#include "providers/upstream_auth_settings.hpp"
#include "util/http_text.hpp"

namespace toolport::rest {

namespace {

namespace keys {
using namespace config;

Key path_or_list(std::string name, std::string doc) {
    auto key = any_key(std::move(name), std::move(doc));
    key.schema = [] {
        return nlohmann::json{{"anyOf", {{{"type", "string"}}, {{"type", "array"}, {"items", {{"type", "string"}}}}}}};
    };
    return key;
}

namespace list {
const Key url = string_key("url", "The catalog's path (or URL) that lists the tools.");
const Key method = string_key("method", "GET, POST, PUT, PATCH or DELETE (any case).", "GET");
const Key pagination = one_of_key("pagination", {"none", "page", "next"},
                                  "How the list is paged: not at all, by page number, or by a next link.", "none");
const Key page_param = string_key("page_param", "The query parameter of the page number.");
const Key page_size_param = string_key("page_size_param", "The query parameter of the page size.", "page_size");
const Key page_size = integer_key("page_size", 1, 10000, "Tools asked for per page.", "100");
const Key first_page = integer_key("first_page", 0, 1, "The number of the first page.", "1");
const Key has_next_path = string_key("has_next_path", "Dotted path of the answer's \"another page\" flag.");
const Key next_path = string_key("next_path", "Dotted path of the answer's next link.");
const Key tools_path = string_key("tools_path", "Dotted path of the answer's list of tools.");
const Key success_path = string_key("success_path", "Dotted path of the answer's success flag.");
const Key error_path = string_key("error_path", "Dotted path of the answer's error.");
const Key max_pages = integer_key("max_pages", 1, 100000, "Most pages read.", "1000");
const Key format = one_of_key("format", {"auto", "openai", "bare", "mcp"}, "The shape of each listed tool.", "auto");
const Section table{"list",
                    "How the catalog's tools are listed.",
                    {&url, &method, &pagination, &page_param, &page_size_param, &page_size, &first_page, &has_next_path,
                     &next_path, &tools_path, &success_path, &error_path, &max_pages, &format}};
}  // namespace list

namespace execute {
const Key url = string_key("url", "The path (or URL) a tool call is sent to ({name} is the tool's name).");
const Key method = string_key("method", "GET, POST, PUT, PATCH or DELETE (any case).", "POST");
const Key body = any_key("body", "The request's body: a template where {name} and {arguments} are replaced.");
const Key output_path = path_or_list("output_path", "Dotted path(s) of the answer's output, the first found.");
const Key error_path = path_or_list("error_path", "Dotted path(s) of the answer's error.");
const Key success_path = path_or_list("success_path", "Dotted path(s) of the answer's success flag.");
const Key meta_paths = path_or_list("meta_paths", "Dotted paths of the answer kept in the result's _meta.");
const Key stream_argument = string_key("stream_argument", "The argument that asks for a streamed answer.");
const Key stream_query = string_key("stream_query", "The query added when a streamed answer is asked for.");
const Section table{"execute",
                    "How a tool call is sent to the catalog API.",
                    {&url, &method, &body, &output_path, &error_path, &success_path, &meta_paths, &stream_argument,
                     &stream_query}};
}  // namespace execute

const Key preset = one_of_key("preset", {"agentpmt"},
                              "Start from a known catalog's settings (the keys below override).");
const Key base_url = string_key("base_url",
                                "The catalog API's origin, e.g. https://api.example.com (required unless "
                                "a preset gives it).");
const Key list_section = section_key("list", list::table, list::table.doc);
const Key execute_section = section_key("execute", execute::table, execute::table.doc);
const Key headers = map_key("headers", "Headers sent with every request.");
const Key headers_from_env = map_key("headers_from_env",
                                     "Headers sent with every request, each from the environment "
                                     "variable it names.");
const Key forward_headers = list_key("forward_headers", "Headers of the MCP client's HTTP request passed on.");
const Key name_from = one_of_key("name_from", {"name", "title"}, "Where a tool's name comes from.", "name");
const Key tool_prefix = string_key("tool_prefix", "Put before every tool name.");
const Key refresh_interval_s = duration_key("refresh_interval_s", "s", 0, 7 * 86400,
                                            "List the catalog again this often (0: only on reload).", "300");
const Key request_timeout_ms = duration_key("request_timeout_ms", "ms", 1, 600000, "A request's timeout.", "30000");
const Key retry_max_s = duration_key("retry_max_s", "s", 1, 3600, "Longest wait between tries to list the catalog.",
                                     "60");
const Key max_response_bytes = integer_key("max_response_bytes", 1024, 4294967296.0,
                                           "An answer beyond this is refused while it is read.", "8388608");
const Key max_tools = integer_key("max_tools", 1, 1000000, "Most tools served from the catalog.", "10000");
const Key auth = providers::auth_key("How Toolport authenticates to the catalog API (gives its Authorization header).");
const Key strict_arguments = boolean_key("strict_arguments", "Refuse arguments a tool's schema does not define.",
                                         "false");
const Section table{"rest",
                    "One REST tool catalog: each listed tool served as an MCP tool.",
                    {&preset, &base_url, &list_section, &execute_section, &headers, &headers_from_env, &forward_headers,
                     &name_from, &tool_prefix, &refresh_interval_s, &request_timeout_ms, &retry_max_s,
                     &max_response_bytes, &max_tools, &auth, &strict_arguments}};
}  // namespace keys

// AgentPMT (shared/reference/rest-catalog-and-budget.md, part 1): the catalog in OpenAI
// function format, paged with details.has_next_page; purchases answered in one of three
// shapes (the shipped server's response.data.output, the router's output, the design
// doc's result), an SSE stream when asked with ?stream=true.
CatalogSettings agentpmt_preset() {
    CatalogSettings s;
    s.preset = "agentpmt";
    const char* url = std::getenv("AGENT_PAYMENT_API_URL");
    s.base_url = url && *url ? url : "https://api.agentpmt.com";
    s.list.url = "/products/fetch";
    s.list.pagination = Pagination::page;
    s.list.page_size = 100;
    s.list.has_next_path = "details.has_next_page";
    s.list.tools_path = "tools";
    s.list.success_path = "success";
    s.list.error_path = "error";
    s.list.format = ToolFormat::openai;
    s.execute.url = "/products/purchase";
    s.execute.method = "POST";
    s.execute.body = Json{{"product_id", "{name}"}, {"parameters", "{arguments}"}};
    s.execute.output_paths = {"response.data.output", "output", "result"};
    s.execute.error_paths = {"error", "response.data.error", "response.error"};
    s.execute.success_paths = {"success", "response.success", "response.data.success"};
    s.execute.meta_paths = {"purchase_result", "cost", "balance"};
    s.execute.stream_argument = "stream";
    s.execute.stream_query = "stream=true";
    s.headers_from_env = {{"X-API-Key", "AGENT_PAYMENT_API_KEY"}, {"X-Budget-Key", "AGENT_PAYMENT_BUDGET_KEY"}};
    s.name_from = NameFrom::title;
    return s;
}

std::string upper(std::string text) {
    for (auto& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return text;
}

std::string method_setting(const providers::SourceSettings& section, const config::Key& key, std::string fallback) {
    auto method = section.string(key);
    if (!method) return fallback;
    auto m = upper(*method);
    if (m != "GET" && m != "POST" && m != "PUT" && m != "PATCH" && m != "DELETE") {
        section.fail(key, "must be GET, POST, PUT, PATCH or DELETE");
    }
    return m;
}

void read_list(const providers::SourceSettings& section, ListSettings& list) {
    namespace k = keys::list;
    section.check_keys(k::table);
    if (auto v = section.string(k::url)) list.url = *v;
    list.method = method_setting(section, k::method, list.method);
    if (auto v = section.one_of(k::pagination)) {
        list.pagination = *v == "page" ? Pagination::page : *v == "next" ? Pagination::next : Pagination::none;
    }
    if (auto v = section.string(k::page_param)) list.page_param = *v;
    if (auto v = section.string(k::page_size_param)) list.page_size_param = *v;
    if (auto v = section.integer(k::page_size)) list.page_size = static_cast<int>(*v);
    if (auto v = section.integer(k::first_page)) list.first_page = static_cast<int>(*v);
    if (auto v = section.string(k::has_next_path)) list.has_next_path = *v;
    if (auto v = section.string(k::next_path)) list.next_path = *v;
    if (auto v = section.string(k::tools_path)) list.tools_path = *v;
    if (auto v = section.string(k::success_path)) list.success_path = *v;
    if (auto v = section.string(k::error_path)) list.error_path = *v;
    if (auto v = section.integer(k::max_pages)) list.max_pages = static_cast<int>(*v);
    if (auto v = section.one_of(k::format)) {
        list.format = *v == "openai" ? ToolFormat::openai
                      : *v == "bare" ? ToolFormat::bare
                      : *v == "mcp"  ? ToolFormat::mcp
                                     : ToolFormat::automatic;
    }
}

// A list of dotted paths, written as one string or a list.
std::optional<std::vector<std::string>> paths(const providers::SourceSettings& section, const config::Key& key) {
    auto raw = section.value(key.name);
    if (!raw) return std::nullopt;
    if (raw->is_string()) return std::vector<std::string>{raw->get<std::string>()};
    return section.list(key);
}

void read_execute(const providers::SourceSettings& section, ExecuteSettings& execute) {
    namespace k = keys::execute;
    section.check_keys(k::table);
    if (auto v = section.string(k::url)) execute.url = *v;
    execute.method = method_setting(section, k::method, execute.method);
    if (auto v = section.value(k::body.name)) execute.body = *v;
    if (auto v = paths(section, k::output_path)) execute.output_paths = *v;
    if (auto v = paths(section, k::error_path)) execute.error_paths = *v;
    if (auto v = paths(section, k::success_path)) execute.success_paths = *v;
    if (auto v = paths(section, k::meta_paths)) execute.meta_paths = *v;
    if (auto v = section.string(k::stream_argument)) execute.stream_argument = *v;
    if (auto v = section.string(k::stream_query)) execute.stream_query = *v;
}

}  // namespace

std::vector<std::string> preset_names() { return {"agentpmt"}; }

const config::Section& settings_table() { return keys::table; }

const config::Key& file_key() {
    static const config::Key key =
        config::named_sections_key("rest", keys::table, "REST catalogs, by source name (1-64 of A-Z a-z 0-9 _ -).");
    return key;
}

CatalogSettings CatalogSettings::from(const providers::SourceSettings& settings) {
    settings.check_keys(keys::table);
    CatalogSettings s;
    if (auto preset = settings.string(keys::preset)) {
        if (*preset == "agentpmt") s = agentpmt_preset();
        else settings.fail(keys::preset, fmt::format("unknown preset \"{}\" (known: agentpmt)", *preset));
    }
    if (auto v = settings.string(keys::base_url)) s.base_url = *v;
    if (s.base_url.empty())
        settings.fail(keys::base_url, "is required (the catalog API's origin, e.g. https://api.example.com)");
    while (s.base_url.size() > 1 && s.base_url.back() == '/') s.base_url.pop_back();
    try {
        auto url = http_client::parse_url(s.base_url);
        if (url.target.find('?') != std::string::npos) {
            settings.fail(keys::base_url, "must not have a query");
        }
    } catch (const std::invalid_argument& e) {
        settings.fail(keys::base_url, e.what());
    }
    read_list(settings.section(keys::list_section.name), s.list);
    read_execute(settings.section(keys::execute_section.name), s.execute);
    if (auto v = settings.string_map(keys::headers)) {
        for (auto& [name, value] : *v) s.headers[name] = value;
    }
    if (auto v = settings.string_map(keys::headers_from_env)) {
        for (auto& [name, variable] : *v) s.headers_from_env[name] = variable;
    }
    if (auto v = settings.list(keys::forward_headers)) s.forward_headers = *v;
    if (settings.value(keys::auth.name)) {
        auto is_authorization = [](std::string_view name) { return util::iequals_ascii(name, "Authorization"); };
        for (const auto& [name, value] : s.headers) {
            if (is_authorization(name))
                settings.fail(keys::headers, "auth: gives the catalog its Authorization header; remove one");
        }
        for (const auto& [name, variable] : s.headers_from_env) {
            if (is_authorization(name))
                settings.fail(keys::headers_from_env, "auth: gives the catalog its Authorization header; remove one");
        }
        for (const auto& name : s.forward_headers) {
            if (is_authorization(name))
                settings.fail(keys::forward_headers,
                              "auth: gives the catalog its Authorization header; the caller's own "
                              "token is never forwarded");
        }
        s.auth = providers::read_upstream_auth(settings.section(keys::auth.name));
    }
    if (auto v = settings.one_of(keys::name_from)) s.name_from = *v == "title" ? NameFrom::title : NameFrom::name;
    if (auto v = settings.string(keys::tool_prefix)) s.tool_prefix = *v;
    if (auto v = settings.duration<std::chrono::seconds>(keys::refresh_interval_s)) s.refresh_interval = *v;
    if (auto v = settings.duration<std::chrono::milliseconds>(keys::request_timeout_ms)) s.request_timeout = *v;
    if (auto v = settings.duration<std::chrono::seconds>(keys::retry_max_s)) s.retry_max = *v;
    if (auto v = settings.integer(keys::max_response_bytes)) s.max_response_bytes = static_cast<std::size_t>(*v);
    if (auto v = settings.integer(keys::max_tools)) s.max_tools = static_cast<std::size_t>(*v);
    if (auto v = settings.boolean(keys::strict_arguments)) s.strict_arguments = *v;
    return s;
}

}  // namespace toolport::rest
