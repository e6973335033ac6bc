import Foundation
import Shelf
import ShelfCore

/// Internet radio: stations (`rs-N`) the library lists for players (admins keep the list). The server
/// stores the addresses and never fetches a stream itself.
extension SubsonicAPI {
    /// getInternetRadioStations: every station, by name.
    func radioStations(_ call: SubsonicCall) async throws -> SubsonicReply {
        .container("internetRadioStations", "internetRadioStation", try await library.radioStations().map(SubsonicRadioStation.init))
    }

    /// createInternetRadioStation: `streamUrl`, `name`, optional `homepageUrl` (http or https).
    func createRadioStation(_ call: SubsonicCall) async throws -> SubsonicReply {
        let p = call.parameters
        let url = try p.required("streamUrl")
        let name = try p.required("name")
        let home = p.value("homepageUrl")
        _ = try await context.write { batch in try batch.addRadioStation(name: name, streamURL: url, homePageURL: home) }
        return .empty
    }

    /// updateInternetRadioStation: `id` and the same fields as create, all required by the spec.
    func updateRadioStation(_ call: SubsonicCall) async throws -> SubsonicReply {
        let id = try call.parameters.saved(prefix: "rs-", what: "internet radio station")
        let p = call.parameters
        let url = try p.required("streamUrl")
        let name = try p.required("name")
        let home = p.value("homepageUrl")
        try await context.write { batch in try batch.updateRadioStation(id, name: name, streamURL: url, homePageURL: home) }
        return .empty
    }

    /// deleteInternetRadioStation: `id`.
    func deleteRadioStation(_ call: SubsonicCall) async throws -> SubsonicReply {
        let id = try call.parameters.saved(prefix: "rs-", what: "internet radio station")
        try await context.write { batch in try batch.deleteRadioStation(id) }
        return .empty
    }
}

/// A station as the spec shows one.
struct SubsonicRadioStation: SubsonicModel {
    let station: RadioStation

    init(_ station: RadioStation) { self.station = station }

    func write(to w: inout SubsonicWriter) {
        w.attribute("id", "rs-\(station.id.rawValue)")
        w.attribute("name", station.name)
        w.attribute("streamUrl", station.streamURL)
        w.attribute("homePageUrl", station.homePageURL)
    }
}
