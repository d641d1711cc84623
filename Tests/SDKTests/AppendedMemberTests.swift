import CTermhost
import Testing
import TermhostSDK

/// TermhostStruct.member: an appended pointer member is read only when the producer's
/// struct_size covers it and it is not NULL.
@Suite struct AppendedMemberTests {
    static let openExec: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafeMutablePointer<Int32>?,
                                         UnsafeMutablePointer<termhost_error_t>?) -> termhost_status = { _, _, fd, _ in
        fd?.pointee = 42
        return Int32(TERMHOST_OK)
    }

    @Test func aMemberIsReadOnlyWhenTheStructHoldsItAndItIsSet() throws {
        var table = termhost_ssh_transport_t()
        let end = TermhostStruct.end(of: \termhost_ssh_transport_t.open_exec)
        try withUnsafeMutablePointer(to: &table) { p in
            #expect(TermhostStruct.member(UnsafePointer<termhost_ssh_transport_t>?.none, \.open_exec) == nil, "NULL has no members")
            p.pointee.struct_size = UInt32(end)
            #expect(TermhostStruct.member(UnsafePointer(p), \.open_exec) == nil, "covered but NULL")
            p.pointee.open_exec = Self.openExec
            p.pointee.struct_size = UInt32(end - 1)
            #expect(TermhostStruct.member(UnsafePointer(p), \.open_exec) == nil, "set, but an older producer's struct ends before it")
            p.pointee.struct_size = UInt32(end)
            let found = try #require(TermhostStruct.member(UnsafePointer(p), \.open_exec))
            var fd: Int32 = -1
            #expect(found(nil, nil, &fd, nil) == Int32(TERMHOST_OK) && fd == 42, "the member itself, not a copy of another")
        }
    }
}
