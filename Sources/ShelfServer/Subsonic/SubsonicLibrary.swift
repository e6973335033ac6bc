import Foundation
import Shelf
import ShelfCore

/// Each user's saved play queue, kept in the server's memory: the engine has no table for it,
/// and a queue is what a player restores on another device while the server runs (a restart
/// forgets it, as an app that never saved one expects).
final class SubsonicPlayQueues: Sendable {
    /// One saved queue: its songs, the one playing and where in it, and when and by what client.
    struct Queue: Sendable {
        var songs: [TrackID]
        var current: TrackID?
        var position: Int
        var changed: Date
        var changedBy: String
    }

    private let queues = Locked<[UserID: Queue]>([:])

    /// The queue `user` saved last.
    func queue(of user: UserID) -> Queue? { queues.withLock { $0[user] } }

    /// Replaces `user`'s queue; nil clears it (savePlayQueue without songs).
    func save(_ queue: Queue?, for user: UserID) { queues.withLock { $0[user] = queue } }
}

/// The play queue, folder-style browsing (getMusicDirectory) and library scans (startScan).
extension SubsonicAPI {
    /// The endpoints of this file.
    static let libraryEndpoints: [String: Endpoint] = [
        "savePlayQueue": { api, call in try await api.savePlayQueue(call) },
        "getPlayQueue": { api, call in try await api.getPlayQueue(call) },
        "getMusicDirectory": { api, call in try await api.musicDirectory(call) },
        "startScan": { api, call in try await api.startScan(call) },
    ]

    /// savePlayQueue: `id` (repeated) the songs, `current` one of them, `position` milliseconds into it.
    func savePlayQueue(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        let p = call.parameters
        let ids = try p.values("id").map { text throws(SubsonicError) in try SubsonicParameters.track(text, "id") }
        // Checked even when the queue is cleared: a bad value is the client's mistake either way.
        let position = try p.int("position", default: 0, in: 0...Int(Int64.max)) ?? 0
        guard !ids.isEmpty else {
            playQueues.save(nil, for: user.id)
            return .empty
        }
        let current = try p.value("current").map { text throws(SubsonicError) in try SubsonicParameters.track(text, "current") }
        if let current, !ids.contains(current) { throw SubsonicError(0, "current (tr-\(current)) is not one of the queue's songs") }
        // Songs that do not exist are refused, so a restored queue never names nothing.
        let known = Set(try await library.tracks(ids: ids).tracks.map(\.id))
        if let missing = ids.first(where: { !known.contains($0) }) { throw SubsonicError.notFound("song tr-\(missing)") }
        playQueues.save(.init(songs: ids, current: current, position: position, changed: Date(), changedBy: p.value("c") ?? ""), for: user.id)
        return .empty
    }

    /// getPlayQueue: the user's saved queue (songs deleted since are left out), or an empty answer.
    func getPlayQueue(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        guard let queue = playQueues.queue(of: user.id) else { return .empty }
        let entries = try await songs(queue.songs, for: user, name: "entry")
        return .elements([SubsonicElement(
            "playQueue",
            [("current", queue.current.map { .string(SubsonicID.track($0).description) }), ("position", .int(queue.position)),
             ("username", .string(user.name)), ("changed", .string(Self.iso(queue.changed))), ("changedBy", .string(queue.changedBy))],
            children: entries)])
    }

    /// getMusicDirectory: an artist's directory holds its albums, an album's its songs; the IDs
    /// are the tag-browsing ones, so both ways of browsing name the same things.
    func musicDirectory(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        switch try call.parameters.id() {
        case .artist(let id):
            let artist = try await artistItem(id)
            let albums = try await groupRows(GroupQuery(kind: .album, artist: id), offset: 0, limit: 10_000)
            let children = try await albumElements(albums, child: true, stars: try await groupStars(of: user)).map { element in
                var child = element
                child.name = "child"
                return child
            }
            return .elements([SubsonicElement(
                "directory", [("id", .string(SubsonicID.artist(id).description)), ("name", .string(artist.name)), ("albumCount", .int(artist.albumCount))],
                children: children)])
        case .album(let id):
            let album = try await albumItem(id)
            let ids = try await library.albumTracks(id).map(\.id)
            return .elements([SubsonicElement(
                "directory",
                [("id", .string(SubsonicID.album(id).description)), ("name", .string(album.name)),
                 ("parent", album.artistID.map { .string(SubsonicID.artist($0).description) }), ("songCount", .int(album.trackCount))],
                children: try await songs(ids, for: user, name: "child"))])
        default:
            throw SubsonicError.notFound("directory '\(call.parameters.value("id") ?? "")' (an artist or album ID)")
        }
    }

    /// startScan (admins): an import of the music folders (`shelf serve --music DIR`, the config's `music`), in the background
    /// through the same jobs as `POST /api/import`; getScanStatus follows it.
    func startScan(_ call: SubsonicCall) async throws -> SubsonicReply {
        guard try call.signedIn.isAdmin else { throw SubsonicError(50, "only an admin may start a scan") }
        guard !context.scans.roots.isEmpty else {
            throw SubsonicError(0, "this server knows no music folders to scan; start it with shelf serve --music DIR (or `music` in its config file)")
        }
        // One scan at a time: while any import runs, the scan status reports that one.
        context.scans.scanNow(reason: "startScan")
        return try await scanStatus()
    }

    /// getScanStatus: whether an import runs, and files handled (while one runs) or tracks in the library.
    func scanStatus() async throws -> SubsonicReply {
        let status = context.imports.status
        let scanning = status.state == "running"
        let count = scanning ? status.done : try await library.info().trackCount
        var attributes: [(String, SubsonicValue?)] = [("scanning", .bool(scanning)), ("count", .int(count))]
        if scanning { attributes.append(("total", .int(status.total))) }
        return .elements([SubsonicElement("scanStatus", attributes)])
    }
}

/// Music folders: one per root `shelf serve --music` named, numbered from 1 in that order; a
/// server told of none has one folder, the whole library.
extension SubsonicAPI {
    /// One folder: its number, its name (the root's last component) and its root (nil: everything).
    struct MusicFolder: Sendable {
        let id: Int
        let name: String
        let root: URL?
    }

    /// The folders getMusicFolders lists.
    var musicFolders: [MusicFolder] {
        let roots = context.musicRoots
        guard !roots.isEmpty else { return [MusicFolder(id: 1, name: "Music", root: nil)] }
        return roots.enumerated().map { index, root in MusicFolder(id: index + 1, name: root.lastPathComponent, root: root) }
    }

    /// getMusicFolders.
    func getMusicFolders() -> SubsonicReply {
        .elements([SubsonicElement("musicFolders", children: musicFolders.map {
            SubsonicElement("musicFolder", repeated: true, [("id", .int($0.id)), ("name", .string($0.name))])
        })])
    }

    /// The filter `musicFolderId` stands for: the tracks under that folder's root (nil without the
    /// parameter, or for the whole-library folder). An unknown folder is error 70.
    func folderFilter(_ parameters: SubsonicParameters) throws(SubsonicError) -> Filter? {
        guard let text = parameters.value("musicFolderId") else { return nil }
        guard let number = Int(text), let folder = musicFolders.first(where: { $0.id == number }) else {
            throw SubsonicError.notFound("music folder '\(text)' (musicFolderId)")
        }
        guard let root = folder.root else { return nil }
        let path = root.standardizedFileURL.path
        return .text(.path, .prefix(path.hasSuffix("/") ? path : path + "/"))
    }
}
