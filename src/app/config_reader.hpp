// ConfigReader: typed reads of YAML nodes for the configuration loaders. Every error
// names the file, the line and the key (ConfigError), and every string goes through
// ${ENV} expansion.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "app/config.hpp"
#include "util/closest_name.hpp"

namespace toolport {

struct ConfigReader {
    std::string file;

    [[noreturn]] void fail(const YAML::Node& node, const std::string& key, const std::string& what) const {
        auto mark = node.Mark();
        throw ConfigError(fmt::format("{}:{}: {}: {}", file, mark.line + 1, key, what));
    }

    void only_keys(const YAML::Node& map, const std::string& section, const std::set<std::string>& allowed) const {
        if (!map.IsMap()) fail(map, section, "must be a mapping");
        for (const auto& kv : map) {
            auto key = kv.first.as<std::string>();
            if (!allowed.count(key)) {
                std::string list;
                for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
                auto closest = util::closest_name(key, {allowed.begin(), allowed.end()});
                fail(kv.first, section.empty() ? key : section + "." + key,
                     closest ? fmt::format("unknown key; did you mean \"{}\"? (expected one of: {})", *closest, list)
                             : fmt::format("unknown key (expected one of: {})", list));
            }
        }
    }

    std::string str(const YAML::Node& n, const std::string& key) const {
        if (!n.IsScalar()) fail(n, key, "must be a string");
        return expand_env(n.as<std::string>(), fmt::format("{}:{}: {}", file, n.Mark().line + 1, key));
    }

    long long integer(const YAML::Node& n, const std::string& key, long long min, long long max) const {
        auto text = str(n, key);
        try {
            std::size_t used = 0;
            long long v = std::stoll(text, &used);
            if (used != text.size()) throw std::invalid_argument("trailing");
            if (v < min || v > max) fail(n, key, fmt::format("must be between {} and {}", min, max));
            return v;
        } catch (const std::logic_error&) {
            fail(n, key, fmt::format("must be an integer, got \"{}\"", text));
        }
    }

    double number(const YAML::Node& n, const std::string& key, double min, double max) const {
        auto text = str(n, key);
        try {
            std::size_t used = 0;
            double v = std::stod(text, &used);
            if (used != text.size()) throw std::invalid_argument("trailing");
            if (!(v >= min && v <= max)) fail(n, key, fmt::format("must be between {} and {}", min, max));
            return v;
        } catch (const std::logic_error&) {
            fail(n, key, fmt::format("must be a number, got \"{}\"", text));
        }
    }

    bool boolean(const YAML::Node& n, const std::string& key) const {
        auto text = str(n, key);
        if (text == "true" || text == "yes" || text == "on") return true;
        if (text == "false" || text == "no" || text == "off") return false;
        fail(n, key, fmt::format("must be true or false, got \"{}\"", text));
    }

    std::vector<std::string> list(const YAML::Node& n, const std::string& key) const {
        if (!n.IsSequence()) fail(n, key, "must be a list");
        std::vector<std::string> out;
        for (const auto& item : n) out.push_back(str(item, key));
        return out;
    }
};


// The sections that configure the call pipeline and its stores (pipeline_config.cpp):
// pipeline, services, sources, tools, store.
void read_pipeline_sections(const ConfigReader& reader, const YAML::Node& root, Config& config);
// Environment variables that set pipeline defaults on top of the file
// (MAX_DOWNSTREAM_CALLS_PER_REQUEST, DEFAULT_DOWNSTREAM_PER_MCP_CALL,
// MAX_MCP_RESPONSE_SIZE_BYTES, TOOLPORT_STORE).
void apply_pipeline_env(Config& config);

}  // namespace toolport
