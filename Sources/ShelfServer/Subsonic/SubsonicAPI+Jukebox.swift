import Foundation
import Shelf
import ShelfCore

/// jukeboxControl: the server's own audio output (`shelf serve --jukebox`), for admins and the
/// users given the jukebox role.
extension SubsonicAPI {
    func jukeboxControl(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try call.signedIn
        try Self.require(.jukebox, of: user, for: "control the jukebox")
        guard let jukebox = context.jukebox else {
            throw SubsonicError(0, "the jukebox is off on this server (shelf serve --jukebox, or jukebox = true in the config)")
        }
        let p = call.parameters
        let name = try p.required("action")
        let action: Jukebox.Action
        switch name {
        case "get", "status": action = .status
        case "start": action = .start
        case "stop": action = .stop
        case "clear": action = .clear
        case "shuffle": action = .shuffle
        case "skip":
            guard p.has("index") else { throw SubsonicError.missing("index") }
            action = .skip(index: try p.int("index", in: 0...1_000_000) ?? 0, offset: try p.int("offset", default: 0, in: 0...86_400) ?? 0)
        case "remove":
            guard p.has("index") else { throw SubsonicError.missing("index") }
            action = .remove(index: try p.int("index", in: 0...1_000_000) ?? 0)
        case "setGain":
            let text = try p.required("gain")
            guard let gain = Double(text), gain.isFinite, (0...1).contains(gain) else { throw SubsonicError.invalid("gain", text, "a number from 0.0 to 1.0") }
            action = .setGain(gain)
        case "add", "set":
            let texts = p.values("id")
            if name == "add", texts.isEmpty { throw SubsonicError.missing("id") }
            guard texts.count <= 10_000 else { throw SubsonicError.invalid("id", "\(texts.count) ids", "at most 10000 songs") }
            var ids: [TrackID] = []
            for text in texts { ids.append(try SubsonicParameters.track(text, "id")) }
            let found = Dictionary(try await library.tracks(ids: ids).tracks.map { ($0.id, JukeboxFile($0)) }, uniquingKeysWith: { a, _ in a })
            let tracks = try ids.map { id throws(SubsonicError) -> (TrackID, JukeboxFile) in
                guard let path = found[id] else { throw SubsonicError.notFound("song tr-\(id)") }
                return (id, path)
            }
            action = name == "add" ? .add(tracks) : .set(tracks)
        default:
            throw SubsonicError.invalid("action", name, "get, status, set, start, stop, skip, add, clear, remove, shuffle or setGain")
        }
        let outcome = await Fetcher.run { Result { () throws(JukeboxError) in try jukebox.perform(action, by: user.id) } }
        let state: JukeboxState
        switch outcome {
        case .success(let value): state = value
        case .failure(let error): throw SubsonicError(0, error.message)
        }
        guard name == "get" else { return .element("jukeboxStatus", SubsonicJukebox(state: state, entries: nil)) }
        let songs = try await self.songs(state.entries, for: user)
        return .element("jukeboxPlaylist", SubsonicJukebox(state: state, entries: songs))
    }
}

/// jukeboxStatus, or jukeboxPlaylist with its entries.
struct SubsonicJukebox: SubsonicModel {
    let state: JukeboxState
    let entries: [SubsonicSong]?

    func write(to w: inout SubsonicWriter) {
        w.attribute("currentIndex", state.currentIndex)
        w.attribute("playing", state.playing)
        w.attribute("gain", state.gain)
        w.attribute("position", state.position)
        if let entries { w.list("entry", entries) }
    }
}
