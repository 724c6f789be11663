// snapshot: the response document compared with one stored in a file.
//
// Snapshots live in `__snapshots__/<file>` next to the spec (the folder of its file, or of
// its suite for inline specs), pretty-printed JSON with a final newline so that they diff
// well in code review. The first run writes the file and passes; later runs compare deeply.
// `ignoreFields` names keys removed at every depth (in objects inside arrays too) from both
// the response and the stored snapshot before comparing; they are not stored either, so a
// snapshot never changes because of them. RunOptions::update_snapshots rewrites the file.
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "spec/assertions/assertion_type.hpp"
#include "document/document.hpp"

namespace toolport::spec::detail {

namespace fs = std::filesystem;

namespace {

constexpr const char* kSnapshotFolder = "__snapshots__";
constexpr std::size_t kMaxDifferencesShown = 5;

void remove_fields(Json& value, const std::set<std::string>& fields) {
    if (value.is_object()) {
        for (const auto& field : fields) value.erase(field);
    }
    if (value.is_structured()) {
        for (auto& child : value) remove_fields(child, fields);
    }
}

// Where `actual` differs from `expected`, as "at /pointer: ..." lines.
void differences(const Json& expected, const Json& actual, const std::string& pointer, std::vector<std::string>& out,
                 std::size_t& total) {
    if (expected == actual) return;
    std::string where = pointer.empty() ? "at the root" : "at " + pointer;
    auto add = [&](std::string line) {
        if (out.size() < kMaxDifferencesShown) out.push_back(std::move(line));
        ++total;
    };
    if (expected.is_object() && actual.is_object()) {
        for (const auto& [key, value] : expected.items()) {
            auto it = actual.find(key);
            if (it == actual.end())
                add(fmt::format("at {}: missing from the response (snapshot has {})",
                                document::pointer_append(pointer, key), preview(value, 60)));
            else differences(value, *it, document::pointer_append(pointer, key), out, total);
        }
        for (const auto& [key, value] : actual.items()) {
            if (!expected.contains(key))
                add(fmt::format("at {}: not in the snapshot (response has {})", document::pointer_append(pointer, key),
                                preview(value, 60)));
        }
        return;
    }
    if (expected.is_array() && actual.is_array() && expected.size() == actual.size()) {
        for (std::size_t i = 0; i < expected.size(); ++i) {
            differences(expected[i], actual[i], document::pointer_append(pointer, i), out, total);
        }
        return;
    }
    if (expected.is_array() && actual.is_array()) {
        add(fmt::format("{}: {} items in the snapshot, {} in the response", where, expected.size(), actual.size()));
        return;
    }
    add(fmt::format("{}: snapshot has {}, response has {}", where, preview(expected, 60), preview(actual, 60)));
}

std::optional<FieldProblem> validate_snapshot(const Json& params) {
    fs::path file = params["file"].get<std::string>();
    if (file.empty()) return FieldProblem{"file", "must name a file"};
    if (file.is_absolute())
        return FieldProblem{"file", "must be relative (it names a file in __snapshots__ next to the spec)"};
    for (const auto& part : file) {
        if (part == "..") return FieldProblem{"file", "must stay inside __snapshots__ (no \"..\")"};
    }
    if (!file.has_filename()) return FieldProblem{"file", "must name a file, not a folder"};
    return std::nullopt;
}

bool write_snapshot(const fs::path& path, const Json& value, std::string& error) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec) {
        error = ec.message();
        return false;
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << value.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
    out.close();
    if (!out) {
        error = "the file could not be written";
        return false;
    }
    return true;
}

Verdict check_snapshot(const Json& params, const CheckContext& context) {
    const Outcome& outcome = context.outcome;
    if (outcome.kind == Outcome::Kind::call_failed) {
        return Verdict::fail("there is no response to compare: the call failed (" + outcome.error + ")");
    }
    Json actual;
    try {
        actual = response_document(outcome);
    } catch (const std::runtime_error&) {
        if (outcome.spec_kind != SpecKind::tool) throw;
        actual = outcome.text;  // a tool answering in plain text: the text is the snapshot
    }
    std::set<std::string> ignored;
    if (auto it = params.find("ignoreFields"); it != params.end()) ignored = it->get<std::set<std::string>>();
    remove_fields(actual, ignored);

    std::string relative = (fs::path(kSnapshotFolder) / params["file"].get<std::string>()).generic_string();
    fs::path path = context.spec.folder / kSnapshotFolder / params["file"].get<std::string>();
    std::error_code ec;
    bool exists = fs::exists(path, ec);
    if (context.options.update_snapshots || !exists) {
        std::string error;
        if (!write_snapshot(path, actual, error)) {
            return Verdict::fail(fmt::format("cannot write snapshot {}: {}", relative, error));
        }
        return Verdict::pass("snapshot written", fmt::format("{} snapshot {}", exists ? "updated" : "wrote", relative));
    }

    Json expected;
    try {
        expected = document::parse_json_value(document::read_text_file(path));
    } catch (const document::DocumentError& e) {
        return Verdict::fail(fmt::format("snapshot {} cannot be used: {} (rerun with --update-snapshots to rewrite it)",
                                         relative, e.what()));
    }
    remove_fields(expected, ignored);
    if (expected == actual) return Verdict::pass(fmt::format("matches snapshot {}", relative));

    std::vector<std::string> shown;
    std::size_t total = 0;
    differences(expected, actual, "", shown, total);
    std::string message =
        fmt::format("the response differs from snapshot {} (rerun with --update-snapshots to accept it):", relative);
    for (const auto& line : shown) message += "\n  " + line;
    if (total > shown.size()) message += fmt::format("\n  ... and {} more differences", total - shown.size());
    return Verdict::fail(message);
}

}  // namespace

const AssertionType kSnapshotAssertion{
    "snapshot",
    {{"file", FieldKind::string, true}, {"ignoreFields", FieldKind::string_list, false}},
    validate_snapshot,
    check_snapshot,
};

}  // namespace toolport::spec::detail
