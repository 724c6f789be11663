// The console's page as embedded at build time (web/console/embed.cmake): every file esbuild
// wrote is found under its path, its gzip body inflates to exactly the built bytes, its type
// and ETag are right, and nothing else is served.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "console/static_assets.hpp"

namespace {

namespace fs = std::filesystem;
using toolport::console::find_static_asset;

const fs::path kDist = TOOLPORT_CONSOLE_DIST_DIR;

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string gunzip(std::string_view body) {
    z_stream stream{};
    EXPECT_EQ(inflateInit2(&stream, 15 + 16), Z_OK);
    std::string out;
    char buffer[16384];
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
    stream.avail_in = static_cast<uInt>(body.size());
    int status = Z_OK;
    while (status == Z_OK) {
        stream.next_out = reinterpret_cast<Bytef*>(buffer);
        stream.avail_out = sizeof buffer;
        status = inflate(&stream, Z_NO_FLUSH);
        out.append(buffer, sizeof buffer - stream.avail_out);
    }
    EXPECT_EQ(status, Z_STREAM_END) << "the gzip body does not inflate to its end";
    EXPECT_EQ(stream.avail_in, 0u) << "bytes after the gzip member";
    inflateEnd(&stream);
    return out;
}

std::string expected_type(const fs::path& path) {
    const auto ext = path.extension().string();
    if (ext == ".html") return "text/html; charset=utf-8";
    if (ext == ".js") return "text/javascript; charset=utf-8";
    if (ext == ".css") return "text/css; charset=utf-8";
    if (ext == ".svg") return "image/svg+xml";
    return "unexpected extension " + ext;
}

TEST(ConsoleStaticAssets, EveryBuiltFileIsEmbeddedAndInflatesToItsBytes) {
    ASSERT_TRUE(fs::is_directory(kDist)) << kDist;
    std::set<std::string> etags;
    int files = 0;
    for (const auto& entry : fs::recursive_directory_iterator(kDist)) {
        if (!entry.is_regular_file()) continue;
        ++files;
        const auto relative = entry.path().lexically_relative(kDist).generic_string();
        const auto* asset = find_static_asset(relative);
        ASSERT_NE(asset, nullptr) << relative << " is built but not embedded";
        EXPECT_EQ(asset->path, relative);
        EXPECT_EQ(asset->content_type, expected_type(entry.path())) << relative;
        ASSERT_GE(asset->gzip_body.size(), 18u) << relative;
        EXPECT_EQ(static_cast<unsigned char>(asset->gzip_body[0]), 0x1f) << relative;
        EXPECT_EQ(static_cast<unsigned char>(asset->gzip_body[1]), 0x8b) << relative;
        // Compared as a flag: a bundle printed in full on a mismatch would bury the message.
        const auto inflated = gunzip(asset->gzip_body);
        const auto built = read_file(entry.path());
        EXPECT_TRUE(inflated == built) << relative << ": inflates to " << inflated.size() << " bytes, built "
                                       << built.size();
        ASSERT_EQ(asset->etag.size(), 34u) << asset->etag;
        EXPECT_EQ(asset->etag.front(), '"');
        EXPECT_EQ(asset->etag.back(), '"');
        EXPECT_TRUE(etags.insert(std::string(asset->etag)).second) << relative << " shares its ETag";
    }
    // The page, its script, its stylesheet and its icon at least.
    EXPECT_GE(files, 4);
    for (const char* path : {"index.html", "assets/app.js", "assets/app.css", "assets/favicon.svg"})
        EXPECT_NE(find_static_asset(path), nullptr) << path;
}

TEST(ConsoleStaticAssets, UnknownPathsAreNotFound) {
    for (const char* path : {"", "/", "/index.html", "./index.html", "../index.html", "index.html/", "INDEX.HTML",
                             "index.htm", "assets", "assets/", "assets/app.js.map", "api/me", "assets/../index.html"})
        EXPECT_EQ(find_static_asset(path), nullptr) << '"' << path << '"';
}

// The console's answers carry a CSP with script-src 'self' and style-src 'self': the page must
// have no inline script, no inline style and no reference to anything outside its own files.
TEST(ConsoleStaticAssets, ThePageHasNoInlineScriptOrStyleAndNothingRemote) {
    const auto* index = find_static_asset("index.html");
    ASSERT_NE(index, nullptr);
    const auto html = gunzip(index->gzip_body);
    EXPECT_NE(html.find("<script type=\"module\" src=\"assets/app.js\"></script>"), std::string::npos);
    EXPECT_NE(html.find("<link rel=\"stylesheet\" href=\"assets/app.css\">"), std::string::npos);
    EXPECT_EQ(html.find("<style"), std::string::npos);
    EXPECT_EQ(html.find("style="), std::string::npos);
    EXPECT_EQ(html.find("<script>"), std::string::npos);
    EXPECT_EQ(html.find(" on"), std::string::npos) << "an inline event handler";
    EXPECT_EQ(html.find("http:"), std::string::npos);
    EXPECT_EQ(html.find("https:"), std::string::npos);
    EXPECT_EQ(html.find("//"), std::string::npos);
}

}  // namespace
