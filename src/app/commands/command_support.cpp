#include "app/commands/command_support.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "async/task.hpp"
#include "client/blocking_loop.hpp"
#include "client/shell_words.hpp"
#include "http_client/http_client.hpp"
#include "http_client/url.hpp"
#include "util/sanitize.hpp"

namespace toolport::commands {

std::pair<std::string, std::string> parse_header(const std::string& text) {
    auto colon = text.find(':');
    if (colon == std::string::npos || colon == 0) {
        throw UsageError(
            fmt::format("--header \"{}\" must look like 'Name: value'", util::sanitize_for_message(text, 60)));
    }
    auto trim = [](std::string s) {
        s.erase(0, s.find_first_not_of(" \t"));
        s.erase(s.find_last_not_of(" \t") + 1);
        return s;
    };
    return {trim(text.substr(0, colon)), trim(text.substr(colon + 1))};
}

client::HttpClientOptions http_options(const std::string& url, const std::string& token,
                                       const std::vector<std::string>& headers, const std::string& ca_file) {
    client::HttpClientOptions options;
    options.url = url;
    options.ca_file = ca_file;
    options.bearer_token = token;
    if (options.bearer_token.empty()) {
        if (const char* env = std::getenv("TOOLPORT_TOKEN")) options.bearer_token = env;
    }
    for (const auto& header : headers) options.headers.push_back(parse_header(header));
    options.listen = false;
    return options;
}

std::vector<std::string> stdio_argv(const std::string& command) {
    std::vector<std::string> argv;
    try {
        argv = client::split_shell_words(command);
    } catch (const std::invalid_argument& e) {
        throw UsageError(fmt::format("--stdio: {}", e.what()));
    }
    if (argv.empty()) throw UsageError("--stdio: the command is empty");
    return argv;
}

OperatorReply call_operator_endpoint(const std::string& server_url, const std::string& token, const std::string& ca_file,
                                     const std::string& method, const std::string& path, const std::string& body) {
    http_client::Url url;
    try {
        url = http_client::parse_url(server_url);
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(fmt::format("--url: {}", e.what()));
    }
    std::string bearer = token;
    if (bearer.empty()) {
        if (const char* env = std::getenv("TOOLPORT_TOKEN")) bearer = env;
    }
    client::BlockingLoop loop;
    http_client::ClientOptions options;
    options.ca_file = ca_file;
    http_client::HttpClient http(loop.asio_executor(), options);
    http_client::Request request;
    request.method = method;
    request.url = url.origin() + path;
    if (!bearer.empty()) request.headers.emplace_back("Authorization", "Bearer " + bearer);
    if (!body.empty()) {
        request.headers.emplace_back("Content-Type", "application/json");
        request.body = body;
    }
    http_client::CallOptions call;
    call.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    call.max_attempts = 1;
    http_client::Response response;
    try {
        response = loop.run(http.fetch(std::move(request), std::move(call)));
    } catch (const std::exception& e) {
        throw std::runtime_error(util::sanitize_for_message(e.what()));
    }
    return {static_cast<int>(response.status), std::move(response.body)};
}

}  // namespace toolport::commands
