"""Workload programs: the Component program (one DCD per component) and the per-DCD workload
program, with their collaborators (readiness, restart, removal, model Service, writes).

Programs never write DGD status: they return a :class:`~syncagent.programs.base.ProgramResult`
and the controller persists it once.
"""
