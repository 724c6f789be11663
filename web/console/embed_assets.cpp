// Build tool (not part of toolport): turns the console's built files (esbuild's output, a
// folder in the build tree) into one C++ source that holds each file gzip-compressed, with its
// content type and a strong ETag, as the table behind console::find_static_asset
// (src/console/static_assets.cpp). Built and run by web/console/embed.cmake.
//
//   toolport_console_embed DIST_DIR OUTPUT.cpp
//
// The output is deterministic (files sorted by path, gzip without a name or time), and it is
// rewritten only when its text changes, so an unchanged page recompiles nothing.
#include <openssl/evp.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// The types the page's files may have; a file of any other kind stops the build, rather than
// being served with a guessed type (the answers carry X-Content-Type-Options: nosniff).
const std::map<std::string, std::string> kContentTypes = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".json", "application/json"},
    {".png", "image/png"},
    {".woff2", "font/woff2"},
};

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path.string());
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// gzip (RFC 1952) at the best compression; zlib writes a header with no file name and a zero
// modification time, so the same input gives the same bytes on every build.
std::string gzip(const std::string& data) {
    z_stream stream{};
    if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("deflateInit2 failed");
    std::string out(deflateBound(&stream, static_cast<uLong>(data.size())) + 32, '\0');
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    stream.avail_in = static_cast<uInt>(data.size());
    stream.next_out = reinterpret_cast<Bytef*>(out.data());
    stream.avail_out = static_cast<uInt>(out.size());
    const int status = deflate(&stream, Z_FINISH);
    out.resize(stream.total_out);
    deflateEnd(&stream);
    if (status != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
    return out;
}

// A strong ETag: the first 128 bits of the content's SHA-256, quoted.
std::string etag(const std::string& data) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("SHA-256 failed");
    static const char* hex = "0123456789abcdef";
    std::string tag = "\"";
    for (unsigned i = 0; i < 16; ++i) {
        tag += hex[digest[i] >> 4];
        tag += hex[digest[i] & 15];
    }
    return tag + "\"";
}

// A C++ string literal of any bytes: octal escapes are at most three digits, so a following
// digit can never be read as part of the escape (a hex escape would swallow it).
void write_literal(std::ostringstream& out, const std::string& bytes) {
    out << "\n        \"";
    std::size_t column = 0;
    for (unsigned char c : bytes) {
        if (column >= 100) {
            out << "\"\n        \"";
            column = 0;
        }
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '?' && !(c >= '0' && c <= '7')) {
            out << static_cast<char>(c);
            ++column;
        } else {
            char escape[5];
            std::snprintf(escape, sizeof escape, "\\%03o", c);
            out << escape;
            column += 4;
        }
    }
    out << "\"";
}

struct Asset {
    std::string path;
    std::string content_type;
    std::string body;
    std::string gzip_body;
    std::string etag;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: toolport_console_embed DIST_DIR OUTPUT.cpp\n");
        return 2;
    }
    try {
        const fs::path dist = argv[1];
        std::vector<Asset> assets;
        for (const auto& entry : fs::recursive_directory_iterator(dist)) {
            if (!entry.is_regular_file()) continue;
            const auto relative = entry.path().lexically_relative(dist).generic_string();
            const auto type = kContentTypes.find(entry.path().extension().string());
            if (type == kContentTypes.end())
                throw std::runtime_error(relative + ": no content type known for this extension");
            Asset asset{relative, type->second, read_file(entry.path()), {}, {}};
            asset.gzip_body = gzip(asset.body);
            asset.etag = etag(asset.body);
            assets.push_back(std::move(asset));
        }
        if (std::none_of(assets.begin(), assets.end(), [](const Asset& a) { return a.path == "index.html"; }))
            throw std::runtime_error(dist.string() + " holds no index.html");
        std::sort(assets.begin(), assets.end(), [](const Asset& a, const Asset& b) { return a.path < b.path; });

        std::ostringstream out;
        out << "// Generated by toolport_console_embed (web/console/embed_assets.cpp) from the console's built\n"
               "// files; not to be edited. Sorted by path for console::find_static_asset.\n"
               "#include \"console/static_assets.hpp\"\n\n"
               "#include <cstddef>\n\n"
               "namespace toolport::console::embedded {\n\n"
               "extern const StaticAsset assets[];\n"
               "extern const std::size_t asset_count;\n\n"
               "using namespace std::string_view_literals;\n\n"
               "const StaticAsset assets[] = {\n";
        std::size_t compressed = 0;
        std::size_t plain = 0;
        for (const auto& asset : assets) {
            out << "    {\"" << asset.path << "\"sv, \"" << asset.content_type << "\"sv,";
            write_literal(out, asset.gzip_body);
            out << "sv,\n        R\"(" << asset.etag << ")\"sv},\n";
            compressed += asset.gzip_body.size();
            plain += asset.body.size();
        }
        out << "};\n\nconst std::size_t asset_count = " << assets.size() << ";\n\n"
            << "}  // namespace toolport::console::embedded\n";

        const fs::path output = argv[2];
        const std::string text = out.str();
        if (!fs::exists(output) || read_file(output) != text) {
            fs::create_directories(output.parent_path());
            std::ofstream file(output, std::ios::binary | std::ios::trunc);
            file << text;
            if (!file) throw std::runtime_error("cannot write " + output.string());
        }
        std::printf("console: %zu files embedded, %zu bytes, %zu bytes gzip-compressed\n", assets.size(), plain,
                    compressed);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "toolport_console_embed: %s\n", e.what());
        return 1;
    }
    return 0;
}
