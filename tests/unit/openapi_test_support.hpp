// What the OpenAPI unit tests share: the fixture folder, documents written to a temporary
// folder, and the refusal a call throws.
#pragma once

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>

#include <unistd.h>

#include "providers/openapi/openapi_document.hpp"
#include "providers/openapi/operations.hpp"
#include "server/tool_error.hpp"

namespace toolport::openapi::test {

inline std::filesystem::path fixture_dir() {
    return std::filesystem::path(__FILE__).parent_path().parent_path() / "fixtures" / "openapi";
}

// A folder of documents that goes away with the object.
class DocumentFolder {
public:
    DocumentFolder() {
        static int counter = 0;
        dir_ = std::filesystem::temp_directory_path() /
               ("toolport-openapi-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
        std::filesystem::create_directories(dir_);
    }
    ~DocumentFolder() {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(dir_ / name) << text;
        return (dir_ / name).string();
    }
    const std::filesystem::path& path() const { return dir_; }

private:
    std::filesystem::path dir_;
};

// The operations of a one-file YAML document.
inline OperationList operations_of(const std::string& yaml, const OperationFilter& filter = {},
                                   const std::string& prefix = "") {
    DocumentFolder folder;
    auto docs = load_file_document(folder.write("api.yaml", yaml));
    return read_operations(docs, filter, prefix);
}

inline const Operation& named(const OperationList& list, const std::string& name) {
    for (const auto& op : list.operations) {
        if (op.tool_name == name) return op;
    }
    throw std::runtime_error("no tool named " + name);
}

// The refusal `fn` throws, as the client would see it; null when it throws nothing.
inline Json error_of(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const ToolError& e) {
        return e.to_json();
    }
    return nullptr;
}

}  // namespace toolport::openapi::test
