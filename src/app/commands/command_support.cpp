#include "app/commands/command_support.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "client/shell_words.hpp"
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

}  // namespace toolport::commands
