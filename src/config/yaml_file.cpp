#include "config/yaml_file.hpp"

namespace toolport::config {

namespace {

// `unique`: the path in `marks`; `dotted`: the path in `lines`.
nlohmann::json walk(FileTree& tree, const YAML::Node& node, const std::string& unique, const std::string& dotted) {
    const int line = static_cast<int>(node.Mark().line) + 1;
    tree.marks[unique].node_line = line;
    tree.lines[dotted] = line;
    if (node.IsNull()) return nullptr;
    if (node.IsMap()) {
        auto object = nlohmann::json::object();
        for (const auto& kv : node) {
            const auto name = kv.first.as<std::string>();
            const auto child = unique.empty() ? name : unique + "." + name;
            tree.marks[child].key_line = static_cast<int>(kv.first.Mark().line) + 1;
            tree.marks[child].key_column = static_cast<int>(kv.first.Mark().column);
            object[name] = walk(tree, kv.second, child, dotted.empty() ? name : dotted + "." + name);
        }
        return object;
    }
    if (node.IsSequence()) {
        auto array = nlohmann::json::array();
        std::size_t i = 0;
        for (const auto& item : node)
            array.push_back(walk(tree, item, unique + "[" + std::to_string(i++) + "]", dotted));
        return array;
    }
    return node.Scalar();
}

}  // namespace

std::shared_ptr<const FileTree> tree_from_yaml(const YAML::Node& root, const std::string& file) {
    auto tree = std::make_shared<FileTree>();
    tree->file = file;
    tree->values = walk(*tree, root, "", "");
    return tree;
}

}  // namespace toolport::config
