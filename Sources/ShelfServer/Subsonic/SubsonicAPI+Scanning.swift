import Foundation
import Shelf
import ShelfCore

/// Media library scanning: startScan (admins, checked by the registry) and getScanStatus.
extension SubsonicAPI {
    /// startScan (admins): an import of the music folders (`shelf serve --music DIR`, the config's `music`), in the background
    /// through the same jobs as `POST /api/import`; getScanStatus follows it.
    func startScan() async throws -> SubsonicReply {
        guard !context.scans.roots.isEmpty else {
            throw SubsonicError(0, "this server knows no music folders to scan; start it with shelf serve --music DIR (or `music` in its config file)")
        }
        // One scan at a time: while any import runs, the scan status reports that one.
        context.scans.scanNow(reason: "startScan")
        return try await scanStatus()
    }

    /// getScanStatus: whether an import runs, and the tracks in the library — or the files the
    /// running scan has handled once they outnumber them. Never 0 for a library that has tracks
    /// while a scan starts: a tagger's plugin logs startScan's count as the tracks being scanned.
    func scanStatus() async throws -> SubsonicReply {
        let status = context.imports.status
        let scanning = status.state == "running"
        let tracks = try await library.info().trackCount
        let count = scanning ? max(status.done, tracks) : tracks
        return .element("scanStatus", SubsonicScanStatus(scanning: scanning, count: count, total: scanning ? status.total : nil))
    }
}
