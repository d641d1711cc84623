import Foundation
import Testing
import TermhostSDK

/// PathText gives what NSString's path methods give, and also on the paths where those trap
/// ("//" right before a non-ASCII character, or a single relative component), which come from the environment and config files.
@Suite struct PathTextTests {
    @Test func agreesWithNSStringWhereItDoesNotTrap() {
        for path in ["/a/b", "/a/b/", "/a", "/", "a/b", "", "/a/./b", "/a/../b", "/tmp/café", "/tmp//café", "./x", "/a///b"] {
            #expect(PathText.parent(path) == (path as NSString).deletingLastPathComponent, "\(path)")
            #expect(PathText.lastComponent(path) == (path as NSString).lastPathComponent, "\(path)")
        }
    }

    @Test func pathsWhereNSStringTrapsHaveAParentAndALastComponent() {
        #expect(PathText.parent("/srv//été/vault") == "/srv/été")
        #expect(PathText.parent("/srv//été") == "/srv")
        #expect(PathText.lastComponent("/srv//été") == "été")
        #expect(PathText.parent("//é") == "/")
        // A single relative component traps in deletingLastPathComponent too.
        #expect(PathText.parent("a") == "" && PathText.lastComponent("a") == "a")
    }
}
