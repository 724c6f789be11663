#include "document/yaml_insert.hpp"

#include <fmt/format.h>

#include "document/document.hpp"

namespace toolport::document {

namespace {

struct Line {
    std::string text;
    std::size_t indent = 0;
    bool content = false;  // neither blank nor a comment
};

std::vector<Line> split_lines(const std::string& text) {
    std::vector<Line> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        auto end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        Line line;
        line.text = text.substr(start, end - start);
        const auto first = line.text.find_first_not_of(" \t\r");
        line.indent = first == std::string::npos ? 0 : first;
        line.content = first != std::string::npos && line.text[first] != '#';
        lines.push_back(std::move(line));
        start = end + 1;
    }
    return lines;
}

// What follows `key:` on a line, without a trailing comment and spaces.
std::string value_after_key(const std::string& line, std::size_t colon) {
    std::string rest = line.substr(colon + 1);
    if (auto hash = rest.find(" #"); hash != std::string::npos) rest.erase(hash);
    const auto first = rest.find_first_not_of(" \t\r");
    const auto last = rest.find_last_not_of(" \t\r");
    return first == std::string::npos ? std::string() : rest.substr(first, last - first + 1);
}

std::string comment_after_key(const std::string& line, std::size_t colon) {
    const std::string rest = line.substr(colon + 1);
    auto hash = rest.find(" #");
    return hash == std::string::npos ? std::string() : rest.substr(hash);
}

bool is_key_line(const Line& line, const std::string& key, std::size_t& colon) {
    if (!line.content || line.indent != 0) return false;
    for (const std::string& spelling : {key, "\"" + key + "\"", "'" + key + "'"}) {
        if (line.text.compare(0, spelling.size(), spelling) != 0) continue;
        auto at = line.text.find_first_not_of(' ', spelling.size());
        if (at != std::string::npos && line.text[at] == ':' &&
            (at + 1 == line.text.size() || line.text[at + 1] == ' ' || line.text[at + 1] == '\r')) {
            colon = at;
            return true;
        }
    }
    return false;
}

}  // namespace

std::string insert_mapping_entry(const std::string& text, const std::string& section, const std::string& name,
                                 const std::vector<std::string>& body, const Json& expected) {
    Json before;
    try {
        before = parse_yaml(text).value;
    } catch (const DocumentError& e) {
        throw YamlEditError(fmt::format("the file is not valid YAML: {}", e.what()));
    }
    if (!before.is_null() && !before.is_object()) throw YamlEditError("the file is not a mapping of settings");
    if (before.is_object() && before.contains(section)) {
        const Json& existing = before[section];
        if (!existing.is_null() && !existing.is_object()) throw YamlEditError(section + ": is not a mapping");
        if (existing.is_object() && existing.contains(name))
            throw YamlEditError(fmt::format("{}: already has an entry named \"{}\"", section, name));
    }

    auto lines = split_lines(text);
    std::size_t section_line = lines.size();
    std::size_t colon = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (is_key_line(lines[i], section, colon)) {
            section_line = i;
            break;
        }
    }
    std::vector<std::string> out;
    out.reserve(lines.size() + body.size() + 3);
    for (const auto& line : lines) out.push_back(line.text);
    std::size_t indent = 2;
    std::size_t insert_at = 0;
    if (section_line == lines.size()) {
        if (before.is_object() && before.contains(section))
            throw YamlEditError(
                fmt::format("{}: is written in a way this edit does not handle; add the entry by hand", section));
        while (!out.empty() && out.back().find_first_not_of(" \t\r") == std::string::npos) out.pop_back();
        if (!out.empty()) out.push_back("");
        out.push_back(section + ":");
        insert_at = out.size();
    } else {
        const std::string value = value_after_key(lines[section_line].text, colon);
        if (value == "{}") {
            out[section_line] = lines[section_line].text.substr(0, colon + 1) +
                                comment_after_key(lines[section_line].text, colon);
        } else if (!value.empty()) {
            throw YamlEditError(
                fmt::format("{}: is written in flow style ({{...}}) on line {}; write it as a block to add entries",
                            section, section_line + 1));
        }
        insert_at = section_line + 1;
        bool indent_known = false;
        for (std::size_t i = section_line + 1; i < lines.size(); ++i) {
            if (!lines[i].content) continue;
            if (lines[i].indent == 0) break;
            if (!indent_known) {
                indent = lines[i].indent;
                indent_known = true;
            }
            insert_at = i + 1;
        }
    }
    std::vector<std::string> added;
    const std::string pad(indent, ' ');
    added.push_back(pad + name + ":");
    for (const auto& line : body) added.push_back(line.empty() ? std::string() : pad + pad + line);
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(insert_at), added.begin(), added.end());

    std::string result;
    for (const auto& line : out) result += line + '\n';
    // Parsed again: the entry reads back as meant, and nothing else moved.
    Json after;
    try {
        after = parse_yaml(result).value;
    } catch (const DocumentError& e) {
        throw YamlEditError(
            fmt::format("the edit would leave the file unreadable ({}); add the entry by hand", e.what()));
    }
    Json expected_after = before.is_object() ? before : Json::object();
    if (!expected_after.contains(section) || expected_after[section].is_null())
        expected_after[section] = Json::object();
    expected_after[section][name] = expected;
    if (after != expected_after)
        throw YamlEditError("the edit would not read back as intended (unusual layout); add the entry by hand");
    return result;
}

}  // namespace toolport::document
