#include "providers/rest/catalog_settings.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "http_client/url.hpp"
#include "providers/upstream_auth_settings.hpp"
#include "util/http_text.hpp"

namespace toolport::rest {

namespace {

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

std::string method_setting(const providers::SourceSettings& section, const std::string& key, std::string fallback) {
    auto method = section.string(key);
    if (!method) return fallback;
    auto m = upper(*method);
    if (m != "GET" && m != "POST" && m != "PUT" && m != "PATCH" && m != "DELETE") {
        section.fail(key, "must be GET, POST, PUT, PATCH or DELETE");
    }
    return m;
}

void read_list(const providers::SourceSettings& section, ListSettings& list) {
    section.only_keys({"url", "method", "pagination", "page_param", "page_size_param", "page_size", "first_page",
                       "has_next_path", "next_path", "tools_path", "success_path", "error_path", "max_pages", "format"});
    if (auto v = section.string("url")) list.url = *v;
    list.method = method_setting(section, "method", list.method);
    if (auto v = section.string("pagination")) {
        if (*v == "none") list.pagination = Pagination::none;
        else if (*v == "page") list.pagination = Pagination::page;
        else if (*v == "next") list.pagination = Pagination::next;
        else section.fail("pagination", "must be none, page or next");
    }
    if (auto v = section.string("page_param")) list.page_param = *v;
    if (auto v = section.string("page_size_param")) list.page_size_param = *v;
    if (auto v = section.integer("page_size", 1, 10000)) list.page_size = static_cast<int>(*v);
    if (auto v = section.integer("first_page", 0, 1)) list.first_page = static_cast<int>(*v);
    if (auto v = section.string("has_next_path")) list.has_next_path = *v;
    if (auto v = section.string("next_path")) list.next_path = *v;
    if (auto v = section.string("tools_path")) list.tools_path = *v;
    if (auto v = section.string("success_path")) list.success_path = *v;
    if (auto v = section.string("error_path")) list.error_path = *v;
    if (auto v = section.integer("max_pages", 1, 100000)) list.max_pages = static_cast<int>(*v);
    if (auto v = section.string("format")) {
        if (*v == "auto") list.format = ToolFormat::automatic;
        else if (*v == "openai") list.format = ToolFormat::openai;
        else if (*v == "bare") list.format = ToolFormat::bare;
        else if (*v == "mcp") list.format = ToolFormat::mcp;
        else section.fail("format", "must be auto, openai, bare or mcp");
    }
}

// A list of dotted paths, written as one string or a list.
std::optional<std::vector<std::string>> paths(const providers::SourceSettings& section, const std::string& key) {
    auto raw = section.value(key);
    if (!raw) return std::nullopt;
    if (raw->is_string()) return std::vector<std::string>{raw->get<std::string>()};
    return section.list(key);
}

void read_execute(const providers::SourceSettings& section, ExecuteSettings& execute) {
    section.only_keys({"url", "method", "body", "output_path", "error_path", "success_path", "meta_paths",
                       "stream_argument", "stream_query"});
    if (auto v = section.string("url")) execute.url = *v;
    execute.method = method_setting(section, "method", execute.method);
    if (auto v = section.value("body")) execute.body = *v;
    if (auto v = paths(section, "output_path")) execute.output_paths = *v;
    if (auto v = paths(section, "error_path")) execute.error_paths = *v;
    if (auto v = paths(section, "success_path")) execute.success_paths = *v;
    if (auto v = paths(section, "meta_paths")) execute.meta_paths = *v;
    if (auto v = section.string("stream_argument")) execute.stream_argument = *v;
    if (auto v = section.string("stream_query")) execute.stream_query = *v;
}

}  // namespace

std::vector<std::string> preset_names() { return {"agentpmt"}; }

CatalogSettings CatalogSettings::from(const providers::SourceSettings& settings) {
    settings.only_keys({"preset", "base_url", "list", "execute", "headers", "headers_from_env", "forward_headers",
                        "name_from", "tool_prefix", "refresh_interval_s", "request_timeout_ms", "retry_max_s",
                        "max_response_bytes", "max_tools", "auth", "strict_arguments"});
    CatalogSettings s;
    if (auto preset = settings.string("preset")) {
        if (*preset == "agentpmt") s = agentpmt_preset();
        else settings.fail("preset", fmt::format("unknown preset \"{}\" (known: agentpmt)", *preset));
    }
    if (auto v = settings.string("base_url")) s.base_url = *v;
    if (s.base_url.empty()) settings.fail("base_url", "is required (the catalog API's origin, e.g. https://api.example.com)");
    while (s.base_url.size() > 1 && s.base_url.back() == '/') s.base_url.pop_back();
    try {
        auto url = http_client::parse_url(s.base_url);
        if (url.target.find('?') != std::string::npos) {
            settings.fail("base_url", "must not have a query");
        }
    } catch (const std::invalid_argument& e) {
        settings.fail("base_url", e.what());
    }
    read_list(settings.section("list"), s.list);
    read_execute(settings.section("execute"), s.execute);
    if (auto v = settings.string_map("headers")) {
        for (auto& [name, value] : *v) s.headers[name] = value;
    }
    if (auto v = settings.string_map("headers_from_env")) {
        for (auto& [name, variable] : *v) s.headers_from_env[name] = variable;
    }
    if (auto v = settings.list("forward_headers")) s.forward_headers = *v;
    if (settings.value("auth")) {
        auto is_authorization = [](std::string_view name) { return util::iequals_ascii(name, "Authorization"); };
        for (const auto& [name, value] : s.headers) {
            if (is_authorization(name)) settings.fail("headers", "auth: gives the catalog its Authorization header; remove one");
        }
        for (const auto& [name, variable] : s.headers_from_env) {
            if (is_authorization(name))
                settings.fail("headers_from_env", "auth: gives the catalog its Authorization header; remove one");
        }
        for (const auto& name : s.forward_headers) {
            if (is_authorization(name))
                settings.fail("forward_headers", "auth: gives the catalog its Authorization header; the caller's own "
                                                 "token is never forwarded");
        }
        s.auth = providers::read_upstream_auth(settings.section("auth"));
    }
    if (auto v = settings.string("name_from")) {
        if (*v == "name") s.name_from = NameFrom::name;
        else if (*v == "title") s.name_from = NameFrom::title;
        else settings.fail("name_from", "must be name or title");
    }
    if (auto v = settings.string("tool_prefix")) s.tool_prefix = *v;
    if (auto v = settings.integer("refresh_interval_s", 0, 7 * 86400)) s.refresh_interval = std::chrono::seconds(*v);
    if (auto v = settings.integer("request_timeout_ms", 1, 600000)) s.request_timeout = std::chrono::milliseconds(*v);
    if (auto v = settings.integer("retry_max_s", 1, 3600)) s.retry_max = std::chrono::seconds(*v);
    if (auto v = settings.integer("max_response_bytes", 1024, 1LL << 32)) s.max_response_bytes = static_cast<std::size_t>(*v);
    if (auto v = settings.integer("max_tools", 1, 1000000)) s.max_tools = static_cast<std::size_t>(*v);
    if (auto v = settings.boolean("strict_arguments")) s.strict_arguments = *v;
    return s;
}

}  // namespace toolport::rest
