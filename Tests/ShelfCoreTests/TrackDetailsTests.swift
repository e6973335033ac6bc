import Foundation
import ShelfCore
import Testing

/// The stored form of a track's details and the rules that split single-value tags.
@Suite struct TrackDetailsTests {
    /// The credit lists read from the stored text alone agree with a full decode, with every
    /// other field present or absent.
    @Test func creditListsAreReadWithoutTheRest() {
        var full = TrackDetails()
        full.artists = ["A", "B"]
        full.albumArtists = ["A"]
        full.genres = ["Rock", "Pop"]
        full.composers = ["C"]
        full.labels = ["Warp"]
        full.replayGain = ReplayGain(trackGain: -3)
        var sparse = TrackDetails()
        sparse.composers = ["Only"]
        sparse.bpm = 120
        var none = TrackDetails()
        none.labels = ["L"]
        var identified = full
        identified.musicBrainz.artistIDs = ["8c1e2f4a-0000-4000-8000-000000000001", "8c1e2f4a-0000-4000-8000-000000000002"]
        identified.musicBrainz.albumArtistIDs = ["8c1e2f4a-0000-4000-8000-000000000001"]
        for details in [full, sparse, none, identified] {
            let lists = TrackDetails.creditLists(encoded: details.encoded ?? "")
            #expect(lists.artists == details.artists && lists.genres == details.genres && lists.composers == details.composers, "\(details)")
            #expect(lists.albumArtists == details.albumArtists, "\(details)")
            #expect(lists.artistIDs == details.musicBrainz.artistIDs && lists.albumArtistIDs == details.musicBrainz.albumArtistIDs, "\(details)")
        }
    }

    @Test func theStandardSeparatorsSplitListsAndKeepNamesWhole() {
        let names = TagSeparators.standard.names
        #expect(TagSeparators.split("A; B", on: names) == ["A", "B"])
        #expect(TagSeparators.split("A / B", on: names) == ["A", "B"])
        #expect(TagSeparators.split("AC/DC", on: names) == ["AC/DC"])
        #expect(TagSeparators.split("Simon & Garfunkel", on: names) == ["Simon & Garfunkel"])
        #expect(TagSeparators.split("Daft Punk feat. Pharrell Williams", on: names) == ["Daft Punk", "Pharrell Williams"])
        #expect(TagSeparators.split("A;;A; ", on: names) == ["A"], "blanks dropped, repeats kept once")
        #expect(TagSeparators.split("Rock/Pop, Funk", on: TagSeparators.standard.genres) == ["Rock", "Pop", "Funk"])
        #expect(TagSeparators.split("A; B", on: []) == ["A; B"])
    }

    @Test func theStoredFormRoundTripsEveryField() {
        var d = TrackDetails()
        #expect(d.encoded == nil && TrackDetails(encoded: nil) == d)
        d.artists = ["A", "B"]
        d.albumArtists = ["A"]
        d.genres = ["Rock", "日本"]
        d.composers = ["C"]
        d.moods = ["Happy"]
        d.contributors = [Contributor(role: "performer", subRole: "guitar", name: "G"), Contributor(role: "conductor", name: "K")]
        d.musicBrainz = MusicBrainzIDs(
            recordingID: "r", releaseTrackID: "t", releaseID: "l", releaseGroupID: "g", artistIDs: ["a1", "a2"],
            albumArtistIDs: ["a1"], workIDs: ["w"], acoustID: "x")
        d.replayGain = ReplayGain(trackGain: -6.25, trackPeak: 0.987654, albumGain: nil, albumPeak: 1)
        d.originalDate = "1969"
        d.releaseDate = "1969-09-26"
        d.releaseTypes = ["album", "live"]
        d.releaseStatus = "official"
        d.labels = ["L1", "L2"]
        d.catalogNumbers = ["CAT-1"]
        d.barcode = "0123"
        d.isrcs = ["I1"]
        d.bpm = 120
        d.discSubtitle = "Side B"
        d.media = "CD"
        d.releaseCountry = "JP"
        d.albumVersion = "Deluxe"
        d.bitDepth = 24
        #expect(TrackDetails(encoded: d.encoded) == d)
        // A gain present with no value at all survives as "ReplayGain present".
        var empty = TrackDetails()
        empty.replayGain = ReplayGain()
        #expect(TrackDetails(encoded: empty.encoded) == empty)
        // Unknown keys from a newer Shelf are skipped.
        #expect(TrackDetails(encoded: "zz\u{1F}1\u{1E}bpm\u{1F}90").bpm == 90)
        #expect(TrackDetails.clean("a\u{1F}b\u{1E}c") == "a b c")
    }
}
