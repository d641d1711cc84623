import CLibSSH2
import Foundation
import TermhostSDK

/// What the server says about one path (SFTP v3 attributes; any may be missing).
struct RemoteEntry: Sendable, Equatable {
    var name: String
    var size: UInt64?
    var permissions: UInt32?
    var mtime: UInt64?
    var uid: UInt32?
    var gid: UInt32?
    /// False when the server's bytes for the name were not UTF-8 (`name` is then lossy).
    var validUTF8 = true

    init(name: String, attributes a: LIBSSH2_SFTP_ATTRIBUTES) {
        self.name = name
        let flags = UInt(a.flags)
        // The wire carries 32-bit fields; truncating keeps a value libssh2 widened (or a
        // hostile one) from trapping the conversion.
        if flags & UInt(LIBSSH2_SFTP_ATTR_SIZE) != 0 { size = a.filesize }
        if flags & UInt(LIBSSH2_SFTP_ATTR_PERMISSIONS) != 0 { permissions = UInt32(truncatingIfNeeded: a.permissions) }
        if flags & UInt(LIBSSH2_SFTP_ATTR_ACMODTIME) != 0 { mtime = UInt64(a.mtime) }
        if flags & UInt(LIBSSH2_SFTP_ATTR_UIDGID) != 0 { uid = UInt32(truncatingIfNeeded: a.uid); gid = UInt32(truncatingIfNeeded: a.gid) }
    }

    init(name: String, size: UInt64?, permissions: UInt32?, mtime: UInt64?) {
        self.name = name
        self.size = size
        self.permissions = permissions
        self.mtime = mtime
    }

    private var type: UInt32 { (permissions ?? 0) & FileType.mask }
    var isDirectory: Bool { type == FileType.directory }
    var isRegular: Bool { type == FileType.regular }
    var isSymlink: Bool { type == FileType.symlink }
    var mode: UInt32 { (permissions ?? 0o644) & 0o7777 }

    /// `ls -l` style: "-rw-r--r--  1000  1000   4096 Nov 29 14:31 name".
    var longListing: String {
        let kind: Character = isDirectory ? "d" : isSymlink ? "l" : isRegular ? "-" : "?"
        let bits = Array("rwxrwxrwx")
        let p = permissions ?? 0
        let rwx = String((0..<9).map { p & (0o400 >> UInt32($0)) != 0 ? bits[$0] : "-" })
        let date = mtime.map { RemoteEntry.dateFormatter.string(from: Date(timeIntervalSince1970: TimeInterval($0))) } ?? "?"
        let owner = uid.map(String.init) ?? "?", group = gid.map(String.init) ?? "?"
        let sizeText = size.map(String.init) ?? "?"
        // The name is the server's: shown, so a newline in it cannot fake another line.
        return "\(kind)\(rwx) \(owner.rightAligned(6)) \(group.rightAligned(6)) \(sizeText.rightAligned(12)) \(date) \(name.shown)"
    }

    static let dateFormatter: DateFormatter = {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.dateFormat = "MMM dd yyyy HH:mm"
        return f
    }()

    /// One JSON object for scripts and the ABI (null for what the server did not send).
    var json: String {
        let kind = isDirectory ? "directory" : isSymlink ? "symlink" : isRegular ? "file" : "other"
        func n<T>(_ v: T?) -> String { v.map { "\($0)" } ?? "null" }
        return "{\"name\":\(JSONText.quoted(name)),\"type\":\"\(kind)\",\"size\":\(n(size)),\"mode\":\(permissions.map { "\($0 & 0o7777)" } ?? "null"),\"mtime\":\(n(mtime)),\"uid\":\(n(uid)),\"gid\":\(n(gid))}"
    }
}

/// POSIX file type bits, as SFTP v3 carries them in permissions and stat(2) in st_mode.
enum FileType {
    static let mask: UInt32 = 0o170000
    static let directory: UInt32 = 0o040000
    static let regular: UInt32 = 0o100000
    static let symlink: UInt32 = 0o120000

    static func of(_ st: stat) -> UInt32 { UInt32(st.st_mode) & mask }
}
