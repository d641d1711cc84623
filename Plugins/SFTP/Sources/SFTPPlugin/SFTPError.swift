import CLibSSH2
import Glibc

/// A failed SFTP or transfer step, worded as "sftp: <path>: <reason>" with the server's reason
/// when it gave one.
struct SFTPError: Error, CustomStringConvertible {
    enum Kind: Equatable {
        /// The connection is gone (network, server killed, timeout): transfers pause.
        case connectionLost
        /// The SSH plugin refused the connection: host key or credentials (nothing to retry).
        case denied
        /// The server answered with an SFTP status (see `status`).
        case remote
        /// A local file operation failed.
        case local
        /// Resume or commit refused: the source changed, the prefix differs, no atomic replace.
        case refused
        /// The user or the host paused the work: partial files and checkpoints are kept.
        case paused
        /// The user cancelled the work (or a sibling segment failed): partial files go.
        case stopped
        /// Anything else: bad arguments, unsupported requests.
        case failed
    }
    var kind: Kind
    var message: String
    /// The SFTP status code (LIBSSH2_FX_*) for `.remote`.
    var status: UInt = 0

    init(_ kind: Kind, _ message: String, status: UInt = 0) {
        self.kind = kind
        self.message = message
        self.status = status
    }

    var description: String { message }

    /// As ssh and sftp: 255 when the connection failed or was refused, 1 for anything else.
    var exitStatus: Int32 { kind == .connectionLost || kind == .denied ? 255 : 1 }

    /// The reason text OpenSSH's sftp prints for a status code.
    static func reason(_ status: UInt) -> String {
        switch status {
        case LIBSSH2_FX_EOF: "End of file"
        case LIBSSH2_FX_NO_SUCH_FILE, LIBSSH2_FX_NO_SUCH_PATH: "No such file or directory"
        case LIBSSH2_FX_PERMISSION_DENIED: "Permission denied"
        case LIBSSH2_FX_FAILURE: "Failure"
        case LIBSSH2_FX_BAD_MESSAGE: "Bad message"
        case LIBSSH2_FX_OP_UNSUPPORTED: "Operation unsupported"
        case LIBSSH2_FX_FILE_ALREADY_EXISTS: "File exists"
        case LIBSSH2_FX_WRITE_PROTECT: "Read-only file system"
        case LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM: "No space left on device"
        case LIBSSH2_FX_QUOTA_EXCEEDED: "Quota exceeded"
        case LIBSSH2_FX_DIR_NOT_EMPTY: "Directory not empty"
        case LIBSSH2_FX_NOT_A_DIRECTORY: "Not a directory"
        case LIBSSH2_FX_INVALID_FILENAME: "Invalid file name"
        case LIBSSH2_FX_LINK_LOOP: "Too many levels of symbolic links"
        default: "SFTP status \(status)"
        }
    }

    /// A local errno as "sftp: <path>: <strerror>".
    static func local(_ path: String, _ what: String = "", errno code: Int32 = errno) -> SFTPError {
        SFTPError(.local, "sftp: \(what.isEmpty ? "" : what + " ")\(path.shown): \(String(cString: strerror(code)))")
    }
}
