/// A value with one owner at a time, moved to the next: whoever hands it over keeps no use of
/// it. libssh2 allows one caller per session, so a session and its channels are owned this way:
/// JumpRoute hands a hop's session to its pump thread, ConnectionPool a kept connection from
/// the command that is done with it to the next one. The one `@unchecked` for all such moves.
struct HandOver<Value>: @unchecked Sendable {
    let value: Value
}
