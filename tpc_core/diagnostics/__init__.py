"""Warnings at the user's line (:mod:`.caller`) and runtime notices of what a call did less well than asked
(:mod:`.notices`): the lowest package, used by every other."""
