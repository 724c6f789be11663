#include "providers/gateway/registry/registry_api.hpp"

#include <fmt/format.h>

#include "http_client/http_client.hpp"
#include "util/percent.hpp"
#include "util/sanitize.hpp"

namespace toolport::registry {

std::string normalized_base(const std::string& url) {
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
        throw std::invalid_argument(
            fmt::format("registry URL \"{}\" must be http:// or https://", util::sanitize_for_message(url, 200)));
    std::string base = url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    return base;
}

std::string list_url(const std::string& base, const ListQuery& q) {
    std::string url = base + "/v0.1/servers";
    std::string sep = "?";
    auto add = [&](const char* name, const std::string& value) {
        if (value.empty()) return;
        url += sep + name + "=" + util::percent_encode(value);
        sep = "&";
    };
    add("cursor", q.cursor);
    if (q.limit > 0) add("limit", std::to_string(q.limit));
    add("search", q.search);
    add("updated_since", q.updated_since);
    add("version", q.version);
    return url;
}

std::string versions_url(const std::string& base, const std::string& name) {
    return base + "/v0.1/servers/" + util::percent_encode(name) + "/versions";
}

std::string version_url(const std::string& base, const std::string& name, const std::string& version) {
    return versions_url(base, name) + "/" + util::percent_encode(version);
}

namespace {

Json parse_json(const std::string& body) {
    try {
        return Json::parse(body);
    } catch (const std::exception&) {
        throw RegistryError("the registry's answer is not JSON");
    }
}

Entry entry_of(const Json& j, const std::string& where) {
    if (!j.is_object()) throw RegistryError(where + " is not an object");
    Entry e;
    if (auto server = j.find("server"); server != j.end()) {
        e.server = *server;
    } else {
        throw RegistryError(where + " has no \"server\"");
    }
    if (!e.server.is_object()) throw RegistryError(where + ".server is not an object");
    if (auto meta = j.find("_meta"); meta != j.end() && meta->is_object()) {
        if (auto official = meta->find(kOfficialMeta); official != meta->end() && official->is_object())
            e.official = *official;
    }
    return e;
}

}  // namespace

Page parse_page(const std::string& body) {
    const Json j = parse_json(body);
    if (!j.is_object()) throw RegistryError("the registry's list is not an object");
    auto servers = j.find("servers");
    if (servers == j.end() || !servers->is_array()) throw RegistryError("the registry's list has no \"servers\" array");
    Page page;
    for (std::size_t i = 0; i < servers->size(); ++i)
        page.entries.push_back(entry_of((*servers)[i], fmt::format("servers[{}]", i)));
    if (auto meta = j.find("metadata"); meta != j.end() && meta->is_object()) {
        if (auto next = meta->find("nextCursor"); next != meta->end() && next->is_string())
            page.next_cursor = next->get<std::string>();
    }
    return page;
}

Entry parse_entry(const std::string& body) { return entry_of(parse_json(body), "the registry's answer"); }

RegistryClient::RegistryClient(http_client::HttpClient& http, std::string base_url, std::size_t max_response_bytes,
                               std::chrono::milliseconds timeout)
    : http_(http), base_(normalized_base(base_url)), max_response_bytes_(max_response_bytes), timeout_(timeout) {}

Task<std::string> RegistryClient::get(std::string url, std::string what) {
    http_client::Request request;
    request.url = std::move(url);
    request.headers.emplace_back("Accept", "application/json");
    http_client::CallOptions options;
    options.deadline = std::chrono::steady_clock::now() + timeout_;
    options.max_response_bytes = max_response_bytes_;
    http_client::Response response;
    try {
        response = co_await http_.fetch(std::move(request), std::move(options));
    } catch (const http_client::ResponseTooLarge&) {
        throw RegistryError(
            fmt::format("the registry {} answered {} with more than {} bytes", base_, what, max_response_bytes_));
    } catch (const http_client::HttpError& e) {
        throw RegistryError(fmt::format("the registry {} could not be asked for {}: {}", base_, what, e.what()));
    }
    if (response.status == 404)
        throw RegistryError(fmt::format("the registry {} has no {}", base_, what), /*not_found=*/true);
    if (response.status != 200)
        throw RegistryError(fmt::format("the registry {} answered {} with HTTP {}", base_, what, response.status));
    co_return std::move(response.body);
}

Task<Page> RegistryClient::list(ListQuery query) {
    auto body = co_await get(list_url(base_, query), "the list of servers");
    co_return parse_page(body);
}

Task<Page> RegistryClient::versions(std::string name) {
    auto body = co_await get(versions_url(base_, name), "server " + util::sanitize_for_message(name, 200));
    co_return parse_page(body);
}

Task<Entry> RegistryClient::version(std::string name, std::string version) {
    auto body = co_await get(version_url(base_, name, version),
                             fmt::format("server {} version {}", util::sanitize_for_message(name, 200),
                                         util::sanitize_for_message(version, 100)));
    co_return parse_entry(body);
}

}  // namespace toolport::registry
