"""Training stages of TPC, run from a checkout (not part of the installed wheel).

``python -m training.curation --config training/configs/curation_qa_train.yaml`` builds the CTD and MCQR
data sets (paper Sections 3.2 and 3.4); the SFT, RL, CSE-training and export stages reuse
:mod:`training.common` for their configs.
"""
