import Foundation
import Testing
import TestSupport

/// Docs/Architecture.md's "Layers and folders" table stays the map of Package.swift: every
/// target the package declares is named there (in backticks), so a new module cannot land
/// without a line that says what it is.
@Suite struct ArchitectureMapTests {
    @Test func everyTargetOfThePackageIsInTheLayersTable() throws {
        let package = try String(contentsOfFile: Paths.root + "/Package.swift", encoding: .utf8)
        let doc = try String(contentsOfFile: Paths.root + "/Docs/Architecture.md", encoding: .utf8)
        let table = try #require(doc.components(separatedBy: "## Layers and folders").dropFirst().first?
            .components(separatedBy: "\n## ").first)
        let pattern = try NSRegularExpression(pattern: #"\.(?:target|executableTarget|systemLibrary|testTarget)\(name: "([^"]+)""#)
        let names = pattern.matches(in: package, range: NSRange(package.startIndex..., in: package)).compactMap {
            Range($0.range(at: 1), in: package).map { String(package[$0]) }
        }
        #expect(names.count > 40, "the targets were not found in Package.swift: \(names)")
        let missing = names.filter { !table.contains("`\($0)`") }
        #expect(missing.isEmpty, "targets without a line in Docs/Architecture.md's Layers and folders table: \(missing)")
    }
}
