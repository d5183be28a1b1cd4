"""The conol session a chat request becomes: messages rendered to one user turn, tool hygiene,
images (limits, sources, asset references) and which image addresses may be fetched."""
