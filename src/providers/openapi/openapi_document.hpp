// An OpenAPI 3.0/3.1 document (JSON or YAML) as JSON, with the files it refers to, and
// its `$ref`s resolved on demand:
//
//   DocumentSet docs = load_file_document("./petstore.yaml");          // or, from a URL:
//   DocumentSet docs = co_await load_url_document(http, "https://api.example.com/openapi.json", &cancel);
//   Json operation = docs.resolve(docs.root()["paths"]["/pets"]["get"], docs.root_location());
//
// A `$ref` may point into the same document ("#/components/schemas/Pet") or into another
// one beside it ("common.yaml#/components/schemas/Error"); document_locations.hpp says
// which others a document may refer to.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "async/task.hpp"
#include "providers/openapi/document_error.hpp"
#include "providers/openapi/document_locations.hpp"
#include "util/json.hpp"

namespace toolport {
class CancelToken;
namespace http_client {
class HttpClient;
}
}  // namespace toolport

namespace toolport::openapi {

// A parsed document: its value and the line of every member (JSON Pointer → 1-based line),
// which gives the operations their document order (JSON objects here are sorted by key).
struct ParsedDocument {
    Json value;
    std::map<std::string, int> lines;
};
// JSON when the text starts with '{' (or the location ends in .json), YAML otherwise.
ParsedDocument parse_document_text(const std::string& text, const std::string& location);

class DocumentSet {
public:
    DocumentSet(std::string root_location, ParsedDocument root);

    const std::string& root_location() const { return root_location_; }
    const Json& root() const { return root_.value; }
    // The line `pointer` of the root document was written on; 0 when unknown.
    int line_of(const std::string& pointer) const;
    // "3.0" or "3.1" (from the `openapi` field; checked at construction).
    const std::string& version() const { return version_; }
    bool is_openapi_30() const { return version_ == "3.0"; }

    // Other documents the loaded ones refer to and that are neither loaded nor refused yet.
    std::vector<std::string> missing() const;
    void add(const std::string& location, Json value);
    // A document that could not be loaded: refs into it fail with `why`.
    void add_failure(const std::string& location, std::string why);

    // `node`, written in the document at `location`, with every `$ref` replaced by what it
    // refers to (siblings of a `$ref` are laid over the target, as 3.1 allows).
    //
    // Cycles: a `$ref` met again while its own target is being expanded is cut there and
    // becomes `{}` (any value) with a description saying so. Each tool's schema is sent
    // self-contained, without `$ref`s: many MCP clients do not resolve them, and
    // definitions shared between a tool's input and output would have to be copied into
    // both. Cutting costs only the validation of the deeper levels of a recursive value,
    // which the API still checks. Expansion is also bounded in total size (a DAG of refs
    // can grow exponentially): past it, DocumentError.
    //
    // Throws DocumentError for a ref to nothing, to a refused document or past the bound.
    Json resolve(const Json& node, const std::string& location) const;

private:
    const Json& document_at(const std::string& location) const;
    // `names_map`: `node` maps names to objects (properties, responses, ...), so none of
    // its keys is a keyword.
    Json resolve_node(const Json& node, const std::string& location, std::vector<std::string>& active,
                      std::size_t& budget, bool names_map = false) const;

    std::string root_location_;
    ParsedDocument root_;
    std::string version_;
    std::map<std::string, Json> others_;
    std::map<std::string, std::string> failures_;
};

// Where the API is: `configured` (the base_url setting) when set, else servers[0].url
// with its variables at their defaults, a relative one taken against a URL document's own
// address. Throws DocumentError when there is none to use.
std::string server_url(const DocumentSet& docs, const std::string& configured);

// Reads a file document and the files it refers to. Throws DocumentError.
DocumentSet load_file_document(const std::string& path);
// Fetches a URL document and the same-origin documents it refers to, with `http`. Throws
// DocumentError (HTTP failures included), OperationCancelled when `cancel` fires.
Task<DocumentSet> load_url_document(http_client::HttpClient& http, std::string url, CancelToken* cancel);

}  // namespace toolport::openapi
