import Foundation
import SyncCore

/// A host record as the SSH plugin stores one: a JSON object of a few hundred bytes.
func hostRecord(_ i: Int, revision: Int = 0) -> [UInt8] {
    Array(#"{"name":"host-\#(i)","hostname":"10.\#(i / 65536).\#((i / 256) % 256).\#(i % 256)","port":22,"user":"deploy","identity":"team-key","jump":"bastion","tags":["bench","rev-\#(revision)"]}"#.utf8)
}
