// The configuration file as one tree: every value as JSON (scalars as the strings they are
// written as, not yet ${ENV}-expanded: Settings expands what it reads, when it reads it)
// and the lines each key and value were written on. See settings.hpp for the reading rule.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "config/settings.hpp"

namespace toolport::config {

struct FileTree {
    struct Mark {
        int key_line = 0;    // the line of the key (0: an item of a list, or the file itself)
        int key_column = 0;  // and its column (keys of a flow mapping share a line)
        int node_line = 0;   // the line yaml-cpp gives the value
    };
    std::string file;
    nlohmann::json values;
    // By unique path: "http.listen", a list's items "http.allowed_hosts[1]".
    std::map<std::string, Mark> marks;
    // By the dotted path a source knows its keys by (a list's items share the list's path;
    // the last one written wins, as the sources were always given their lines).
    std::map<std::string, int> lines;
};

// Reads a parsed YAML document (throws YAML::Exception for a key that is not a scalar).
std::shared_ptr<const FileTree> tree_from_yaml(const YAML::Node& root, const std::string& file);

}  // namespace toolport::config
