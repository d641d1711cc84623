import Foundation

/// One host key the user accepted in Termhost, as the SSH plugin's syncable collection
/// `known_hosts` holds it: record key `HOSTID/KEYTYPE`, value `{"key":"BASE64","type":"KEYTYPE"}`
/// (the public key blob, as a known_hosts line has it; nothing secret).
///
/// HOSTID stands for the name the host is looked up by ("host", "[host]:port"); SyncedHostKeys
/// derives it, so no record names a host in the clear. One record per host, port and key type:
/// two devices accepting different keys for one of them write the same record key, which the
/// sync engine (whole-record merge) turns into a conflict for the user, never a silent pick.
///
/// Records arrive from other devices through the vault, so they are untrusted: `decode` checks
/// every part and says why a record is refused. This file uses nothing but Foundation (with
/// KnownHostsParser.swift, Base64.swift and VisibleText.swift), so the fuzz target
/// Tests/Fuzz/SyncedHostKeyFuzz.swift compiles it as it is.
struct SyncedHostKeyRecord: Equatable {
    /// 64 lowercase hex digits.
    let hostID: String
    let keyType: String
    let key: [UInt8]

    /// Far above any public key (a 16384-bit RSA key blob is about 2 KiB); a larger value is
    /// refused before it is parsed.
    static let maximumValueSize = 16 << 10

    var recordKey: String { "\(hostID)/\(keyType)" }

    /// The same bytes for the same key on every device (fixed field order, no timestamps), so
    /// two devices accepting one key do not conflict.
    var value: [UInt8] { Array("{\"key\":\"\(Base64.encode(key))\",\"type\":\"\(keyType)\"}".utf8) }

    /// A record for a key blob, nil when its key type is not one a record may hold.
    init?(hostID: String, key: [UInt8]) {
        guard SyncedHostKeyRecord.isHostID(hostID), let type = KnownHostsParser.keyTypeBytes(in: key),
              let name = String(validating: type, as: UTF8.self), SyncedHostKeyRecord.isKeyTypeName(name) else { return nil }
        self.hostID = hostID
        self.keyType = name
        self.key = key
    }

    /// The record, or why it cannot be used (plain text: nothing of the record is quoted).
    static func decode(recordKey: String, value: [UInt8]) -> Result<SyncedHostKeyRecord, Refusal> {
        guard let slash = recordKey.firstIndex(of: "/") else { return .failure(Refusal("the record key is not HOSTID/KEYTYPE")) }
        let hostID = String(recordKey[..<slash]), keyType = String(recordKey[recordKey.index(after: slash)...])
        guard isHostID(hostID) else { return .failure(Refusal("the host ID is not 64 lowercase hex digits")) }
        guard isKeyTypeName(keyType) else { return .failure(Refusal("the key type in the record key is not a key type name")) }
        guard value.count <= maximumValueSize else { return .failure(Refusal("the value is over \(maximumValueSize) bytes")) }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(value))) as? [String: Any] else {
            return .failure(Refusal("the value is not a JSON object"))
        }
        guard let type = object["type"] as? String, type == keyType else {
            return .failure(Refusal("the value's type is not the key type of the record key"))
        }
        guard let text = object["key"] as? String, let blob = Base64.decode(text[...]), !blob.isEmpty else {
            return .failure(Refusal("the value's key is not base64"))
        }
        guard let record = SyncedHostKeyRecord(hostID: hostID, key: blob), record.keyType == keyType else {
            return .failure(Refusal("the key data is not of the record's key type"))
        }
        return .success(record)
    }

    struct Refusal: Error, Equatable {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    static func isHostID(_ s: String) -> Bool {
        s.utf8.count == 64 && s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// The characters of OpenSSH's key type names ("ssh-ed25519", "sk-ssh-ed25519@openssh.com"):
    /// nothing that needs escaping in JSON or a terminal, and no "/" (the record key's separator).
    static func isKeyTypeName(_ s: String) -> Bool {
        (1...64).contains(s.utf8.count) && s.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x61 && $0 <= 0x7a)
                || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "_")
        }
    }
}
