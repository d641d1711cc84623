#if canImport(TermhostSDK)
import TermhostSDK      // VisibleText; a fuzz target compiles VisibleText.swift beside this file
#endif

/// A name a server put in a directory listing, checked before it becomes part of a local path.
///
/// Design: everything in a listing is the server's word, and a hostile server can list
/// `../../.bashrc`, `a/b`, `..` or a name with an escape sequence. Such a name is refused (named
/// in the error, never written) and the rest of the transfer goes on (OpenSSH's sftp likewise
/// refuses a "suspect path" in a listing; its scp did not, CVE-2019-6111). Only a single path
/// component that stays in its directory is accepted: no `/`, not `.` or `..`, not empty, no
/// NUL, no control characters (they would reach the terminal and the user's shell later), at
/// most NAME_MAX (255) bytes.
///
/// This file uses nothing but the standard library (and VisibleText), so the fuzz target
/// Tests/Fuzz/SFTPNamesFuzz.swift compiles it as it is.
enum RemoteName {
    /// The longest name a Linux file system takes (NAME_MAX), in bytes.
    static let maximumBytes = 255

    /// Why `name` cannot be created in a local directory, or nil when it can.
    static func refusal(_ name: String) -> String? {
        if name.isEmpty { return "an empty name" }
        if name == "." || name == ".." { return "'\(name)' is not a name of its own" }
        if name.utf8.contains(0x2f) { return "it contains '/' (a path, not a name)" }
        if name.utf8.contains(0) { return "it contains a NUL byte" }
        if name.unicodeScalars.contains(where: VisibleText.isUnsafe) { return "it contains control characters" }
        if name.utf8.count > maximumBytes { return "it is longer than \(maximumBytes) bytes" }
        return nil
    }

    /// `dir` and `name` joined, for a name `refusal` accepted: the result is always directly
    /// inside `dir`.
    static func joined(_ dir: String, _ name: String) -> String {
        // utf8.last, not hasSuffix: a Character comparison would see "/" plus a combining mark.
        dir.isEmpty || dir == "." ? name : dir.utf8.last == 0x2f ? dir + name : dir + "/" + name
    }
}

/// The bounds of a recursive plan. A hostile or broken server can list a tree without end
/// (a directory inside itself at every level, or a listing that never says end of file); these
/// stop the walk with a message instead of growing memory until the system kills termhost.
enum RemoteLimits {
    /// Directory levels below the one named: PATH_MAX (4096) allows about that many levels of
    /// short names, and no tree a person makes is deeper. Levels below are refused.
    static let depth = 64
    /// Entries (files, directories and anything else listed) in one plan or one listing: about
    /// 200 MB of plan in memory at most; a tree with more is split into several gets.
    static let entries = 1_000_000
}
