import Foundation
import Shelf
import ShelfCore

/// Sharing: public links (`/share/TOKEN`) to some songs, an album or a playlist, made by users
/// with the share role while the server allows sharing (`--sharing`). See `SharePages`.
extension SubsonicAPI {
    private func requireSharing() throws(SubsonicError) {
        guard sharing else { throw SubsonicError(50, "sharing is turned off on this server (shelf serve --sharing off)") }
    }

    /// `expires` in ms since 1970; 0 or absent: never (for update, absent leaves it).
    private static func expiry(_ p: SubsonicParameters) throws(SubsonicError) -> Date?? {
        guard let ms = try p.int("expires", in: 0...Int(Int64.max) / 2) else { return .none }
        return .some(ms == 0 ? nil : Date(timeIntervalSince1970: Double(ms) / 1000))
    }

    /// createShare: `id` repeated (songs, albums or playlists the user can see, in order), `description`, `expires`.
    func createShare(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        try requireSharing()
        try Self.require(.share, of: user, for: "share")
        let p = call.parameters
        let texts = p.values("id")
        guard !texts.isEmpty else { throw SubsonicError.missing("id") }
        var tracks: [TrackID] = []
        for text in texts {
            switch SubsonicID(text) {
            case .track(let id)?:
                guard try await library.track(id) != nil else { throw SubsonicError.notFound("song tr-\(id)") }
                tracks.append(id)
            case .album(let id)?:
                let item = try await albumItem(id)
                tracks += try await library.albumTracks(item.id).map(\.id)
            case .playlist(let id)?:
                tracks += try await library.playlistTracks(try await visiblePlaylist(id, user).playlist)
            default:
                throw SubsonicError.notFound("song, album or playlist '\(text)' (id)")
            }
        }
        let description = p.value("description") ?? ""
        let expires = try Self.expiry(p) ?? nil
        if let expires, expires <= Date() { throw SubsonicError(0, "expires must be in the future") }
        let share = try await context.write { batch in try batch.createShare(by: user.id, tracks: tracks, description: description, expires: expires) }
        return .container("shares", "share", [try await shareModel(share, call)])
    }

    /// getShares: the user's shares (an admin's: everyone's).
    func getShares(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        var models: [SubsonicShare] = []
        for share in try await library.shares(of: user.isAdmin ? nil : user.id) { models.append(try await shareModel(share, call)) }
        return .container("shares", "share", models)
    }

    /// The share `id` if `call`'s user may change it (its maker, or an admin); error 70 otherwise
    /// (another user's share is not admitted to exist).
    private func ownShare(_ call: SubsonicCall) async throws -> Share {
        let user = try call.signedIn
        let id = try call.parameters.saved(prefix: "sh-", what: "share")
        guard let share = try await library.share(id), user.isAdmin || share.user == user.id else { throw SubsonicError.notFound("share sh-\(id)") }
        return share
    }

    /// updateShare: `id`, `description`, `expires` (0: never).
    func updateShare(_ call: SubsonicCall) async throws -> SubsonicReply {
        // The values first: a bad one is the client's mistake whichever share it names.
        let expires = try Self.expiry(call.parameters)
        let description = call.parameters.value("description")
        let share = try await ownShare(call)
        try await context.write { batch in try batch.updateShare(share.id, description: description, expires: expires) }
        return .empty
    }

    /// deleteShare: `id`; the link stops working at once.
    func deleteShare(_ call: SubsonicCall) async throws -> SubsonicReply {
        let share = try await ownShare(call)
        try await context.write { batch in try batch.deleteShare(share.id) }
        return .empty
    }

    private func shareModel(_ share: Share, _ call: SubsonicCall) async throws -> SubsonicShare {
        let maker = try await library.user(id: share.user)
        let entries = try await songs(share.tracks, for: try call.signedIn)
        return SubsonicShare(share: share, url: Self.publicURL(call.http, path: "/share/\(share.token)"), username: maker?.name ?? "", entries: entries)
    }

    /// An absolute URL on this server for `path`: `public-url`, or the scheme and host the client
    /// reached it under (a trusted proxy's, never a forged header's) and the base path.
    static func publicURL(_ request: HTTPRequest, path: String) -> String { request.absoluteURL(path) }
}

/// A share as the spec shows one.
struct SubsonicShare: SubsonicModel {
    let share: Share
    let url: String
    let username: String
    let entries: [SubsonicSong]

    func write(to w: inout SubsonicWriter) {
        w.attribute("id", "sh-\(share.id.rawValue)")
        w.attribute("url", url)
        w.attribute("description", share.description.isEmpty ? nil : share.description)
        w.attribute("username", username)
        w.attribute("created", share.created)
        w.attribute("expires", share.expires)
        w.attribute("lastVisited", share.lastVisited)
        w.attribute("visitCount", share.visitCount)
        w.list("entry", entries)
    }
}
