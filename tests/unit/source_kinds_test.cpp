// The table of source kinds, assembled from the kinds each folder of src/providers
// declares (<stem>_source_kind.cpp, listed by the generated source_kinds.cpp): every
// folder's kind is there, with its configuration keys, and the lookups behave as the
// configuration and --packs rely on.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/declaration.hpp"
#include "providers/source_table.hpp"

using namespace toolport::providers;

namespace {

namespace fs = std::filesystem;

std::vector<std::string> names(const std::vector<const SourceKind*>& kinds) {
    std::vector<std::string> out;
    for (const auto* kind : kinds) out.push_back(kind->name);
    return out;
}

const SourceKind& kind_named(const std::string& name) {
    for (const auto* kind : all_source_kinds()) {
        if (kind->name == name) return *kind;
    }
    throw std::runtime_error("no kind " + name);
}

}  // namespace

TEST(SourceKinds, EveryKindOfEveryFolderIsInTheTable) {
    EXPECT_EQ(names(all_source_kinds()),
              (std::vector<std::string>{"conformance", "context", "gateway", "openapi", "rest", "tango", "testing"}));
}

// A folder added under src/providers without its kind file would be compiled and never
// offered; each one declares exactly one kind, and the table holds as many.
TEST(SourceKinds, EachProviderFolderDeclaresOneKind) {
    const fs::path providers = fs::path(__FILE__).parent_path().parent_path().parent_path() / "src" / "providers";
    ASSERT_TRUE(fs::is_directory(providers)) << providers;
    std::size_t folders = 0;
    for (const auto& entry : fs::directory_iterator(providers)) {
        if (!entry.is_directory()) continue;
        ++folders;
        std::vector<std::string> kind_files;
        for (const auto& file : fs::directory_iterator(entry.path())) {
            const auto name = file.path().filename().string();
            if (name.ends_with("_source_kind.cpp")) kind_files.push_back(name);
        }
        EXPECT_EQ(kind_files.size(), 1u) << entry.path().filename() << " should hold one *_source_kind.cpp";
    }
    EXPECT_EQ(all_source_kinds().size(), folders);
}

std::vector<std::string> file_key_names(const SourceKind& kind) {
    std::vector<std::string> out;
    for (const auto* key : kind.file_keys) out.push_back(key->name);
    return out;
}

TEST(SourceKinds, EachDeclaresWhereTheConfigurationHoldsItsSettings) {
    for (const char* pack : {"conformance", "context", "tango", "testing"}) {
        EXPECT_TRUE(kind_named(pack).file_keys.empty()) << pack;  // packs.<name>
        EXPECT_FALSE(kind_named(pack).named_instances) << pack;
    }
    EXPECT_EQ(file_key_names(kind_named("rest")), (std::vector<std::string>{"rest"}));
    EXPECT_EQ(file_key_names(kind_named("openapi")), (std::vector<std::string>{"openapi"}));
    EXPECT_EQ(file_key_names(kind_named("gateway")), (std::vector<std::string>{"upstreams", "gateway"}));
    EXPECT_TRUE(kind_named("gateway").single_instance);
    EXPECT_FALSE(kind_named("rest").single_instance);
    // Each key of a kind of many instances maps names to the kind's settings.
    for (const char* name : {"rest", "openapi"}) {
        const auto& kind = kind_named(name);
        ASSERT_EQ(kind.file_keys.size(), 1u);
        EXPECT_EQ(kind.file_keys[0]->type, toolport::config::Type::named_sections) << name;
        EXPECT_EQ(kind.file_keys[0]->section, kind.settings) << name;
    }
    for (const auto* kind : all_source_kinds()) {
        EXPECT_FALSE(kind->summary.empty()) << kind->name;
        EXPECT_TRUE(kind->make) << kind->name;
        EXPECT_TRUE(kind->settings) << kind->name << " declares no table of settings";
        EXPECT_EQ(kind->named_instances, !kind->file_keys.empty()) << kind->name;
    }
    // The file's sources start in this order: the gateway after the others.
    EXPECT_EQ(names(instance_kinds()), (std::vector<std::string>{"openapi", "rest", "gateway"}));
}

TEST(SourceKinds, PacksAndInstanceKindsAreLookedUpApart) {
    ::unsetenv("TOOLPORT_TEST_PACK");
    EXPECT_EQ(names(source_kinds()), (std::vector<std::string>{"conformance", "context", "tango"}));
    EXPECT_EQ(source_names(), "conformance, context, tango");
    EXPECT_EQ(unknown_pack_message("tnago"),
              "unknown pack \"tnago\" (did you mean \"tango\"?) (known: conformance, context, tango)");
    for (const char* instance : {"rest", "openapi", "gateway"}) {
        EXPECT_TRUE(find_instance_kind(instance)) << instance;
        EXPECT_FALSE(find_source_kind(instance)) << instance;
    }
    EXPECT_FALSE(find_instance_kind("tango"));
    EXPECT_FALSE(find_source_kind("testing"));
    ::setenv("TOOLPORT_TEST_PACK", "1", 1);
    EXPECT_EQ(names(source_kinds()), (std::vector<std::string>{"conformance", "context", "tango", "testing"}));
    EXPECT_TRUE(find_source_kind("testing"));
    ::setenv("TOOLPORT_TEST_PACK", "yes", 1);  // only "1" opens it
    EXPECT_FALSE(find_source_kind("testing"));
    ::unsetenv("TOOLPORT_TEST_PACK");
}
