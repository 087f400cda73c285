package candidate

// SearchFits makes ws search the link problems that fit their link, as
// Rank did before it answered them without a search (the reference of
// the external tests).
func SearchFits(ws *Workspace) { ws.searchFits = true }
